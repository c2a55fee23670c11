// What every fuzz target shares: a check that aborts with a readable message (libFuzzer then
// saves the input as a crash artifact), field-by-field frame comparison, a front-to-back reader
// of the input bytes for the scripted targets, and the encode/decode round-trip property.
//
// Fuzzing only: nothing here is linked into the edge or the device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "dsekp/bytes.hpp"
#include "dsekp/codec.hpp"
#include "dsekp/error.hpp"
#include "dsekp/frames.hpp"

namespace dsekp::fuzz {

using Bytes = std::vector<std::uint8_t>;

/// Prints `what` (and `detail`) to stderr and aborts: the harness found a property violation.
[[noreturn]] void fail(const char* what, const std::string& detail = {});

/// Aborts via fail() unless `condition` holds.
inline void check(bool condition, const char* what, const std::string& detail = {}) {
  if (!condition) fail(what, detail);
}

/// Printable form of arbitrary bytes (non-printable bytes as \xNN), for failure messages.
std::string printable(ByteView bytes);

inline ByteView view_of(std::string_view text) {
  return ByteView(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
}

// Field-by-field equality of decoded frames (the frames have no operator==: their fixed-size
// fields compare in constant time through equals()).
bool same(const InitFrame& a, const InitFrame& b);
bool same(const AckFrame& a, const AckFrame& b);
/// `compare_iv`: the nonce is part of the frame only when both carry it (JSON).
bool same(const DataFrame& a, const DataFrame& b, bool compare_iv = true);
bool same(const PskFrame& a, const PskFrame& b);

/// The seed of a scripted target's RNGs for one input: a hash of the whole input. Fixed for an
/// input (a crash reproduces), but any change to the input changes every nonce. Without this the
/// fuzzer learns what the deterministic edge answers (e.g. from an earlier input) and pastes it
/// into a script as "arbitrary bytes": a replay across runs that no real attacker can make,
/// since it amounts to predicting the edge's CSPRNG.
std::uint64_t input_seed(ByteView input) noexcept;

/// Reads the fuzz input front to back: ops and operands of the scripted targets. Reads past the
/// end return zeros, so every input is a complete script (libFuzzer's inputs end anywhere).
class ByteReader {
 public:
  explicit ByteReader(ByteView data) : data_(data) {}
  [[nodiscard]] bool empty() const noexcept { return pos_ >= data_.size(); }
  std::uint8_t u8() noexcept { return pos_ < data_.size() ? data_[pos_++] : 0; }
  std::uint16_t u16() noexcept { return static_cast<std::uint16_t>(u8() << 8 | u8()); }
  std::uint32_t u32() noexcept { return std::uint32_t{u16()} << 16 | u16(); }
  /// A value in [0, n) (n > 0) from one byte.
  std::uint8_t pick(std::uint8_t n) noexcept { return static_cast<std::uint8_t>(u8() % n); }
  /// A length byte L, then L bytes (fewer if the input ends).
  Bytes bytes8() {
    const std::size_t n = u8();
    return take(n);
  }
  /// A 16-bit length, then that many bytes (fewer if the input ends).
  Bytes bytes16() {
    const std::size_t n = u16();
    return take(n);
  }

 private:
  Bytes take(std::size_t n) {
    const std::size_t have = pos_ < data_.size() ? data_.size() - pos_ : 0;
    if (n > have) n = have;
    Bytes out(data_.begin() + static_cast<std::ptrdiff_t>(pos_),
              data_.begin() + static_cast<std::ptrdiff_t>(pos_ + n));
    pos_ += n;
    return out;
  }

  ByteView data_;
  std::size_t pos_ = 0;
};

/// Encodes `frame` with `enc` into a fresh buffer; aborts if the encoder refuses it (every frame
/// a decoder accepted must be encodable).
Bytes encode_or_fail(const InitFrame& frame, Encoding enc);
Bytes encode_or_fail(const AckFrame& frame, Encoding enc);
Bytes encode_or_fail(const DataFrame& frame, Encoding enc);
Bytes encode_or_fail(const PskFrame& frame, Encoding enc);
Bytes encode_or_fail(const RekeyFrame& frame, Encoding enc);

/// The round-trip property of a frame `decoded` from `wire` (a decode that succeeded):
///   * compact: re-encoding gives back exactly `wire` (the layout has one spelling per frame);
///   * JSON: re-encoding decodes to the same frame, and encoding that again gives the same bytes
///     (the encoder's canonical form is a fixed point);
///   * the other encoding carries the same frame (a DATA frame's nonce travels only in JSON).
/// `decode(bytes, frame&)` is the decoder under test. Aborts on any difference.
template <typename Frame, typename Decode>
void check_round_trip(const Frame& decoded, ByteView wire, Decode&& decode) {
  const Encoding enc = detect_encoding(wire);
  const Bytes again = encode_or_fail(decoded, enc);
  if (enc == Encoding::compact) {
    check(again == Bytes(wire.begin(), wire.end()), "compact re-encoding differs from the input",
          printable(wire) + " -> " + printable(again));
  }
  Frame redecoded;
  const Error e = decode(ByteView(again), redecoded);
  check(e == Error::ok, "re-encoded frame does not decode", error_name(e));
  check(same(decoded, redecoded), "re-encoded frame decodes to other values", printable(again));
  check(encode_or_fail(redecoded, enc) == again, "encoder is not a fixed point");

  const Encoding other = enc == Encoding::json ? Encoding::compact : Encoding::json;
  const Bytes crossed = encode_or_fail(decoded, other);
  Frame across;
  const Error e2 = decode(ByteView(crossed), across);
  check(e2 == Error::ok, "frame does not survive the other encoding", error_name(e2));
  if constexpr (std::is_same_v<Frame, DataFrame>) {
    check(same(decoded, across, /*compare_iv=*/false), "other encoding changes the frame");
  } else {
    check(same(decoded, across), "other encoding changes the frame");
  }
}

}  // namespace dsekp::fuzz
