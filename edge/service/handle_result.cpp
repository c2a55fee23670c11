// The outcome name of a HandleResult (see handle_result.hpp).
#include "handle_result.hpp"

namespace dsekp::edge {

const char* HandleResult::reason_name() const noexcept {
  return reason == EdgeReason::protocol_error ? error_name(error) : edge_reason_name(reason);
}

}  // namespace dsekp::edge
