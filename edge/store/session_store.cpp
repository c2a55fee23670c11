// Names of the store statuses (see session_store.hpp).
#include "session_store.hpp"

namespace dsekp::edge {

const char* store_status_name(StoreStatus s) noexcept {
  switch (s) {
    case StoreStatus::ok:
      return "ok";
    case StoreStatus::corrupt_state:
      return "corrupt_state";
    case StoreStatus::invalid_state:
      return "invalid_state";
    case StoreStatus::dev_id_mismatch:
      return "dev_id_mismatch";
    case StoreStatus::generation_conflict:
      return "generation_conflict";
    case StoreStatus::transaction_misuse:
      return "transaction_misuse";
    case StoreStatus::storage_failure:
      return "storage_failure";
  }
  return "unknown";
}

}  // namespace dsekp::edge
