// Splits one JSON object into the raw text of its members' values, with simdjson On-Demand
// (internal to codec_simdjson; simdjson stays out of the public header).
//
// The scanner answers one question: is the input exactly one JSON object whose member names are
// exactly the given names, each once, in any order, followed only by JSON whitespace? If so it
// returns each value's raw text (whitespace trimmed, quotes kept on strings), which the caller
// then checks character by character. Names are compared as written, so an escaped spelling of a
// name is not that name, as in the portable decoder.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>

#include "dsekp/bytes.hpp"

namespace dsekp::simd_detail {

class MemberScanner {
 public:
  /// Allocates the parser for kMaxFrameSize and the padded input buffer, once.
  MemberScanner();
  ~MemberScanner();
  MemberScanner(const MemberScanner&) = delete;
  MemberScanner& operator=(const MemberScanner&) = delete;

  /// True if `wire` is one object with exactly `names` as members (see above); then values[i]
  /// is the raw text of member names[i]. The views point into this scanner's buffer and are
  /// valid until the next scan. At most 32 names. False for anything else, including input the
  /// parser could not take.
  [[nodiscard]] bool scan(ByteView wire, std::span<const std::string_view> names,
                          std::span<std::string_view> values) noexcept;

 private:
  struct Parser;  // simdjson's parser, kept out of this header
  std::unique_ptr<Parser> parser_;
  std::unique_ptr<char[]> buffer_;  // input copy followed by simdjson's read padding
  bool ready_ = false;              // allocation succeeded; otherwise scan() always fails
};

}  // namespace dsekp::simd_detail
