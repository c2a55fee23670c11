// RejectionLog (see rejection_log.hpp).
#include "edge/daemon/rejection_log.hpp"

#include <string>

#include "edge/logging/edge_logger.hpp"
#include "edge/logging/printable.hpp"

namespace dsekp::edge::daemon {

void RejectionLog::log(const HandleResult& r, std::string_view topic, std::uint64_t now_ms) {
  const std::size_t index = r.reason == EdgeReason::protocol_error
                                ? static_cast<std::size_t>(r.error)
                                : kErrorCount + static_cast<std::size_t>(r.reason);
  if (index >= slots_.size()) return;
  Slot& slot = slots_[index];
  const std::uint64_t second = now_ms / 1000;
  if (second != slot.second) {
    if (slot.suppressed > 0)
      logging::logger().warn("rejected {}: {} more not logged", r.reason_name(), slot.suppressed);
    slot = Slot{second, 0, 0};
  }
  if (slot.lines >= per_second_) {
    ++slot.suppressed;
    return;
  }
  ++slot.lines;
  // The topic is bounded by the broker's limits but may hold anything: print it as data.
  const std::string shown = logging::printable(topic);
  const char* const sep = r.detail.empty() ? "" : ": ";
  const std::string detail = logging::printable(r.detail, 256);
  // The device the frame named (not authenticated unless accepted): what an operator greps for.
  const std::string device = r.dev_id.empty() ? std::string() : " from " + r.dev_id;
  if (r.processed()) {
    logging::logger().warn("rejected {} on \"{}\"{}{}{}", r.reason_name(), shown, device, sep,
                           detail);
  } else {
    logging::logger().error("NOT PROCESSED {} on \"{}\"{}{}{}", r.reason_name(), shown, device, sep,
                            detail);
  }
}

}  // namespace dsekp::edge::daemon
