// Stable names of every Error (declared in dsekp/error.hpp): used in logs and as metric labels.
#include "dsekp/error.hpp"

namespace dsekp {

const char* error_name(Error e) noexcept {
  // No default: -Wswitch then flags any enumerator added to error.hpp without a name here.
  switch (e) {
    case Error::ok:
      return "ok";
    case Error::frame_empty:
      return "frame_empty";
    case Error::frame_too_large:
      return "frame_too_large";
    case Error::unknown_frame_type:
      return "unknown_frame_type";
    case Error::truncated:
      return "truncated";
    case Error::trailing_bytes:
      return "trailing_bytes";
    case Error::json_syntax:
      return "json_syntax";
    case Error::json_not_object:
      return "json_not_object";
    case Error::json_too_many_fields:
      return "json_too_many_fields";
    case Error::json_unknown_field:
      return "json_unknown_field";
    case Error::json_duplicate_field:
      return "json_duplicate_field";
    case Error::json_missing_field:
      return "json_missing_field";
    case Error::json_wrong_type:
      return "json_wrong_type";
    case Error::bad_integer:
      return "bad_integer";
    case Error::bad_base64:
      return "bad_base64";
    case Error::bad_field_length:
      return "bad_field_length";
    case Error::bad_dev_id:
      return "bad_dev_id";
    case Error::unsupported_version:
      return "unsupported_version";
    case Error::payload_too_large:
      return "payload_too_large";
    case Error::unknown_device:
      return "unknown_device";
    case Error::stale_timestamp:
      return "stale_timestamp";
    case Error::bad_proof:
      return "bad_proof";
    case Error::duplicate_init:
      return "duplicate_init";
    case Error::superseded_init:
      return "superseded_init";
    case Error::rate_limited:
      return "rate_limited";
    case Error::unknown_session:
      return "unknown_session";
    case Error::nonce_mismatch:
      return "nonce_mismatch";
    case Error::auth_failed:
      return "auth_failed";
    case Error::replay:
      return "replay";
    case Error::too_old:
      return "too_old";
    case Error::dev_id_mismatch:
      return "dev_id_mismatch";
    case Error::no_pending_handshake:
      return "no_pending_handshake";
    case Error::ack_mismatch:
      return "ack_mismatch";
    case Error::bad_ack_proof:
      return "bad_ack_proof";
    case Error::ack_rejected:
      return "ack_rejected";
    case Error::rekey_mismatch:
      return "rekey_mismatch";
    case Error::stale_rekey:
      return "stale_rekey";
    case Error::bad_rekey_proof:
      return "bad_rekey_proof";
    case Error::secret_store_failed:
      return "secret_store_failed";
    case Error::no_session:
      return "no_session";
    case Error::session_exhausted:
      return "session_exhausted";
    case Error::buffer_too_small:
      return "buffer_too_small";
    case Error::invalid_argument:
      return "invalid_argument";
    case Error::crypto_failure:
      return "crypto_failure";
  }
  // Only reached for a value cast from outside the enum; the contract is "never null".
  return "unknown_error";
}

}  // namespace dsekp
