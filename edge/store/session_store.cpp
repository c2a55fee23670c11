// Names and descriptions of the store results (see session_store.hpp).
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

std::string describe(const StoreResult& r) {
  std::string out = store_status_name(r.status);
  if (r.codec != StateCodecError::ok)
    out += std::string(" (") + state_codec_error_name(r.codec) + ")";
  if (!r.message.empty()) {
    // A server's reply can quote what it was sent: no control byte reaches a log line through it.
    out += " (";
    for (const char c : r.message) {
      const auto u = static_cast<unsigned char>(c);
      out += u < 0x20 || u == 0x7F ? '?' : c;
    }
    out += ')';
  }
  return out;
}

}  // namespace dsekp::edge
