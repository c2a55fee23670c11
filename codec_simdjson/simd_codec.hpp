// A fast, host-only decoder of the edge's hot JSON frames (DATA/DOWN and PSK) on simdjson.
//
// Why: the portable decoder (dsekp::decode_data / decode_psk, core/codec_json.cpp) tokenizes with
// jsmn, checks separators in a second pass and re-encodes every base64 field to prove it
// canonical, about 1.1 us per JSON DATA frame. The edge gateway's budget for the whole JSON open
// path is about 3x one AES-128-GCM open, which leaves roughly 250 ns for decoding.
//
// Contract: exactly the portable decoder's. For every input, decode_data()/decode_psk() return
// the same Error as dsekp::decode_data()/decode_psk() and, on success, the same frame values.
//   * Compact frames (first byte not '{'), empty input and input over kMaxFrameSize go straight
//     to the portable decoder.
//   * A JSON frame is first tried on the fast path: simdjson's On-Demand parser splits the text
//     into tokens and checks the object's structure; every member name and value is then checked
//     on its raw text with the portable rules (canonical unsigned decimal and its range, dev_id
//     alphabet, strict padded base64, exact byte lengths, ciphertext <= kMaxPayloadSize, each
//     member exactly once, only whitespace after the object). The fast path only ever accepts.
//   * Whenever the fast path does not accept, the frame is decoded again by the portable decoder,
//     whose verdict is returned. So the error names never differ from the portable decoder's:
//     there are no documented differences. Reproducing the portable decoder's error precedence
//     (tokenizer errors over member errors over value errors, jsmn's token budget, ...) in a
//     second implementation would only create them.
// Cost: a frame the portable decoder accepts always takes the fast path (checked by the
// differential test). A rejected JSON frame costs the fast attempt plus the portable decode; that
// only happens for malformed frames, never for well-formed frames with a bad tag or seq.
//
// Resources: the constructor allocates simdjson's buffers for kMaxFrameSize and a padded copy
// buffer; decoding does not allocate. One decoder per thread: an instance is NOT thread-safe
// (it reuses its parser and buffer for every frame). A moved-from decoder still works, but only
// through the portable decoder.
#pragma once

#include <cstdint>
#include <memory>

#include "dsekp/bytes.hpp"
#include "dsekp/error.hpp"
#include "dsekp/frames.hpp"

namespace dsekp {

namespace simd_detail {
class MemberScanner;
}  // namespace simd_detail

class SimdJsonDecoder {
 public:
  /// How JSON frames were decoded, for metrics and tests: a growing number of portable fallbacks
  /// with few rejections would mean senders emit frames the fast path does not handle.
  struct Stats {
    std::uint64_t fast_accepts = 0;        // JSON frames accepted by the fast path
    std::uint64_t portable_fallbacks = 0;  // JSON frames handed to the portable decoder
  };

  SimdJsonDecoder();
  ~SimdJsonDecoder();
  SimdJsonDecoder(SimdJsonDecoder&&) noexcept;
  SimdJsonDecoder& operator=(SimdJsonDecoder&&) noexcept;
  SimdJsonDecoder(const SimdJsonDecoder&) = delete;
  SimdJsonDecoder& operator=(const SimdJsonDecoder&) = delete;

  /// Same contract as dsekp::decode_data (both encodings; `direction` is stored in `out`).
  Error decode_data(ByteView wire, Direction direction, DataFrame& out) noexcept;
  /// Same contract as dsekp::decode_psk (both encodings).
  Error decode_psk(ByteView wire, PskFrame& out) noexcept;

  [[nodiscard]] const Stats& stats() const noexcept { return stats_; }

 private:
  bool fast_data(ByteView wire, Direction direction, DataFrame& out) noexcept;
  bool fast_psk(ByteView wire, PskFrame& out) noexcept;
  [[nodiscard]] bool wants_fast_path(ByteView wire) const noexcept;

  std::unique_ptr<simd_detail::MemberScanner> scanner_;
  Stats stats_;
};

}  // namespace dsekp
