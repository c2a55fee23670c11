// The decoded form of every DSEKP v1 frame. Codecs (codec.hpp) turn these into wire bytes and back;
// the handshake and data-path code only ever sees these structs.
// All storage is inline (no heap), except that a DataFrameView's ciphertext is the caller's memory;
// variable-length payloads are bounded by kMaxPayloadSize.
#pragma once

#include <cstdint>

#include "dsekp/bytes.hpp"
#include "dsekp/error.hpp"
#include "dsekp/spec.hpp"

namespace dsekp {

/// INIT, device -> edge on dsekp/init.
struct InitFrame {
  DevId dev_id;
  std::uint16_t sessctr = 0;  // random per session
  std::uint32_t t = 0;        // device clock, Unix seconds (0 allowed for clockless devices)
  DevNonce dev_nonce;
  Proof proof;  // HMAC-SHA256(K_init, init transcript)[:16]
};

/// ACK, edge -> device on dsekp/init/ack/{dev_id}.
struct AckFrame {
  DevId dev_id;
  std::uint16_t sessctr = 0;  // echoes the INIT
  EdgeNonce edge_nonce;
  std::uint8_t status = kAckStatusOk;
  Proof proof;  // HMAC-SHA256(K_ack, ack transcript)[:16]
};

/// DATA (device -> edge, dsekp/data) and downlink (edge -> device, dsekp/down/{dev_id}) share
/// one shape; `direction` says which keys, AAD label and compact type byte apply.
enum class Direction : std::uint8_t { uplink, downlink };

/// One DATA or downlink frame. `Ciphertext` is where its ciphertext lives: inline in the frame
/// (DataFrame, up to kMaxPayloadSize bytes) or in memory the caller owns (DataFrameView). The
/// device SDK seals into and opens from the application's own buffers through a view, so that no
/// kMaxPayloadSize frame ever sits on a microcontroller's stack.
template <typename Ciphertext>
struct BasicDataFrame {
  Direction direction = Direction::uplink;
  DevId dev_id;
  std::uint16_t sessctr = 0;
  std::uint32_t seq = 0;
  std::uint64_t sendts_ms = 0;  // sender clock, Unix milliseconds; authenticated (AAD)
  bool has_iv = false;          // JSON carries the nonce as `iv`; compact leaves it implicit
  AeadNonce iv;
  Ciphertext ciphertext;
  AeadTag tag;
};

using DataFrame = BasicDataFrame<BoundedBytes<kMaxPayloadSize>>;
using DataFrameView = BasicDataFrame<ByteView>;

/// The ciphertext bytes of a frame, wherever they are held.
inline ByteView ciphertext_of(const DataFrame& frame) noexcept {
  return frame.ciphertext.view();
}
inline ByteView ciphertext_of(const DataFrameView& frame) noexcept {
  return frame.ciphertext;
}

/// Copies every field but the ciphertext.
template <typename From, typename To>
void copy_data_header(const BasicDataFrame<From>& from, BasicDataFrame<To>& to) noexcept {
  to.direction = from.direction;
  to.dev_id = from.dev_id;
  to.sessctr = from.sessctr;
  to.seq = from.seq;
  to.sendts_ms = from.sendts_ms;
  to.has_iv = from.has_iv;
  to.iv = from.iv;
  to.tag = from.tag;
}

/// Fills the inline frame `out` through `fill(MutableByteView storage, DataFrameView& view)`,
/// which writes a ciphertext into `storage` and describes the frame in `view` (the view-based
/// decoders and sealers): the inline forms of those are this and one call.
template <typename Fill>
Error fill_data_frame(DataFrame& out, Fill&& fill) noexcept {
  DataFrameView view;
  const Error e = fill(out.ciphertext.storage(), view);
  copy_data_header(view, out);
  // view.ciphertext lies in out's storage, so it always fits.
  return out.ciphertext.resize(view.ciphertext.size()) ? e : Error::payload_too_large;
}

/// A view of `frame` whose ciphertext is frame.ciphertext (valid while `frame` is).
inline DataFrameView view_of(const DataFrame& frame) noexcept {
  DataFrameView view;
  copy_data_header(frame, view);
  view.ciphertext = frame.ciphertext.view();
  return view;
}

/// REKEY request, edge -> device on dsekp/rekey/{dev_id} (v1.1): the edge received a DATA frame
/// under a session it does not hold and asks the device to start a new one. Authenticated with
/// a key derived from DEV_SECRET alone (no session needed); `sessctr` and `seq` name the frame
/// that revealed the unknown session, which binds the request to the device's current session.
struct RekeyFrame {
  DevId dev_id;
  std::uint16_t sessctr = 0;
  std::uint32_t seq = 0;
  Proof proof;  // HMAC-SHA256(K_rekey, rekey transcript)[:16]
};

/// The paper's static-PSK baseline frame on psk/data (kept for comparison; no replay protection,
/// no header authentication, random IV).
struct PskFrame {
  DevId dev_id;
  std::uint32_t seq = 0;
  std::uint64_t sendts_ms = 0;
  AeadNonce iv;
  BoundedBytes<kMaxPayloadSize> ciphertext;
  AeadTag tag;
};

}  // namespace dsekp
