// An uplink frame the edge accepted (authenticated, decrypted, not a replay), with everything the
// paper's server logs need (docs/LOGS.md, "Server logs") and nothing they can recompute.
//
// The base64 fields are what the JSON profile carries. For a JSON frame they equal the received
// text: the decoders accept only canonical padded base64, which has exactly one spelling per byte
// string, so re-encoding the decoded bytes gives back the very characters that were received.
// A compact frame carries no text and no nonce, so its bytes are encoded the same way and `iv` is
// the nonce the edge derived (IV_up XOR seq), i.e. what the JSON profile would have sent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dsekp/codec.hpp"
#include "dsekp/frames.hpp"
#include "dsekp/mode.hpp"
#include "edge_reason.hpp"

namespace dsekp::edge {

struct AcceptedFrame {
  Mode mode = Mode::dsekp;
  Encoding encoding = Encoding::json;  // of the received payload
  std::string dev_id;
  std::uint16_t sessctr = 0;  // DSEKP session counter (sessctr_id); 0 for PSK, which has none
  std::uint32_t seq = 0;
  std::uint64_t sendts_ms = 0;  // from the frame (device clock)
  std::uint64_t recvts_ms = 0;  // the edge clock passed to handle()
  // The same instant in Unix µs (system clock, on delivery); recvts_ms == recvts_us / 1000. The
  // server CSV's last column (ours, docs/LOGS.md).
  std::uint64_t recvts_us = 0;
  std::int64_t latency_ms = 0;  // recvts_ms - sendts_ms; negative if the device clock is ahead
  std::string ciphertext_b64;
  std::string iv_b64;
  std::string tag_b64;
  std::vector<std::uint8_t> plaintext;  // the decrypted reading (usually JSON text)
  std::size_t payload_size = 0;         // bytes of the MQTT payload (the encoded frame)
};

/// The row of a DSEKP DATA frame that opened with `nonce` (its derived nonce), received at
/// `recvts_us` (Unix µs; recvts_ms is derived from it).
[[nodiscard]] AcceptedFrame make_accepted_frame(const DataFrame& frame, const AeadNonce& nonce,
                                                ByteView plaintext, ByteView payload,
                                                std::uint64_t recvts_us);

/// The row of a PSK baseline frame (recvts_us as above).
[[nodiscard]] AcceptedFrame make_accepted_frame(const PskFrame& frame, ByteView plaintext,
                                                ByteView payload, std::uint64_t recvts_us);

}  // namespace dsekp::edge
