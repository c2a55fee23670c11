// The one error enum of the library. Every rejection has a named reason that callers count and log.
//
// `Error` is [[nodiscard]]: a function returning it cannot be called and silently ignored. The
// string names (error_name) are stable: they appear in logs and as metric label values.
#pragma once

#include <cstdint>

namespace dsekp {

enum class [[nodiscard]] Error : std::uint8_t{
    ok = 0,

    // Decoding: the bytes are not a well-formed frame of the expected kind.
    frame_empty,           // zero-length input
    frame_too_large,       // input longer than the frame size cap
    unknown_frame_type,    // first byte not '{' nor the compact type, or its encoding not built
    truncated,             // compact frame ends before a fixed-size field
    trailing_bytes,        // bytes after the end of the frame
    json_syntax,           // not valid JSON (as far as the tokenizer sees)
    json_not_object,       // top-level JSON value is not an object
    json_too_many_fields,  // more JSON values than the decoder's token budget (over 11 members)
    json_unknown_field,    // a member name this frame does not define
    json_duplicate_field,  // the same member twice
    json_missing_field,    // a required member is absent
    json_wrong_type,       // member has the wrong JSON type (string vs number vs other)
    bad_integer,           // not a canonical unsigned decimal, or out of the field's range
    bad_base64,            // not canonical padded base64 (RFC 4648 section 4)
    bad_field_length,      // decoded field has the wrong number of bytes
    bad_dev_id,            // dev_id empty, longer than 64 bytes or outside [A-Za-z0-9._-]
    unsupported_version,   // `v` is not 1
    payload_too_large,     // ciphertext/plaintext longer than the payload cap

    // Edge: handshake.
    unknown_device,   // dev_id not in the registry
    stale_timestamp,  // INIT `t` outside +-max_skew of the edge clock
    bad_proof,        // INIT proof does not verify
    duplicate_init,   // (dev_id, dev_nonce) already seen and not the current pending INIT
    superseded_init,  // INIT older than the newest one accepted from this device (by `t`)
    rate_limited,     // per-device INIT budget exhausted (or the admission hook said no)

    // Edge: data.
    unknown_session,  // no pending or established session with this (dev_id, sessctr)
    nonce_mismatch,   // JSON `iv` is not the nonce derived from the session IV base and seq
    auth_failed,      // AEAD tag does not verify
    replay,           // seq already accepted in this session
    too_old,          // seq left of the replay window
    dev_id_mismatch,  // frame names another device than its per-device topic or its receiver

    // Device.
    no_pending_handshake,  // ACK arrived while no INIT is outstanding
    ack_mismatch,          // ACK names another dev_id or sessctr than the outstanding INIT
    bad_ack_proof,         // ACK proof does not verify: not from an edge that knows DEV_SECRET
    ack_rejected,          // authenticated ACK with a non-zero status
    no_session,            // seal/open before a session is established
    session_exhausted,     // seq space of the session used up: start a new session first

    // Generic.
    buffer_too_small,  // caller's output buffer cannot hold the result
    invalid_argument,  // caller passed a value outside the documented range
    crypto_failure,    // the crypto backend reported an internal error

    // Device: REKEY requests (v1.1; appended so that the values above, which the C SDK
    // exposes, keep their numbers).
    rekey_mismatch,   // REKEY names another dev_id or session, or a handshake is outstanding
    stale_rekey,      // REKEY names a seq that is not among the session's recent uplink frames
    bad_rekey_proof,  // REKEY proof does not verify: not from an edge that knows DEV_SECRET

    // Device: the ratchet (v1.2).
    secret_store_failed,  // the next secret could not be stored durably: the ACK is not taken
};

/// Stable snake_case name of an error, e.g. "replay". Never null.
const char* error_name(Error e) noexcept;

/// Number of enumerators (for counters indexed by error).
inline constexpr std::uint8_t kErrorCount =
    static_cast<std::uint8_t>(Error::secret_store_failed) + 1;

}  // namespace dsekp
