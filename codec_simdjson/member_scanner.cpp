// simdjson On-Demand walk of one JSON object into raw member values (see member_scanner.hpp).
//
// Only the error-code API of simdjson is used. On-Demand validates what it visits: stage 1 (the
// SIMD pass, dispatched at run time to the best kernel of the CPU) finds every token and checks
// strings are closed and contain no raw control characters or invalid UTF-8; the walk below
// checks the object's grammar (key, ':', value, ',' or '}'). It does not validate a value it is
// not asked to parse, which is why the caller checks each value's raw text itself.
#include "member_scanner.hpp"

#include <simdjson.h>

#include <cstdint>
#include <cstring>
#include <new>

#include "dsekp/spec.hpp"

namespace dsekp::simd_detail {

namespace ondemand = simdjson::ondemand;

struct MemberScanner::Parser {
  // The capacity never grows: input over kMaxFrameSize is refused before parsing.
  ondemand::parser parser{kMaxFrameSize};
};

namespace {

constexpr std::size_t kBufferSize = kMaxFrameSize + simdjson::SIMDJSON_PADDING;

constexpr bool is_json_ws(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// A raw token runs up to the next token and so includes the whitespace before it.
std::string_view trim_trailing_ws(std::string_view s) noexcept {
  while (!s.empty() && is_json_ws(s.back())) s.remove_suffix(1);
  return s;
}

// `key` points just past the opening quote of a member name. The name is `name` exactly iff its
// bytes follow and then a quote: that quote cannot be escaped, because no name ends in '\'.
// Reading name.size() + 1 bytes stays inside the input's padding.
std::size_t find_name(const char* key, std::span<const std::string_view> names) noexcept {
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string_view name = names[i];
    if (std::memcmp(key, name.data(), name.size()) == 0 && key[name.size()] == '"') return i;
  }
  return names.size();
}

}  // namespace

MemberScanner::MemberScanner()
    : parser_(new (std::nothrow) Parser), buffer_(new (std::nothrow) char[kBufferSize]) {
  // Allocate simdjson's internal buffers now, so that no frame ever pays for it. If anything
  // fails, the scanner refuses every input and the caller's portable fallback takes over.
  ready_ = parser_ != nullptr && buffer_ != nullptr &&
           parser_->parser.allocate(kMaxFrameSize) == simdjson::SUCCESS;
}

MemberScanner::~MemberScanner() = default;

bool MemberScanner::scan(ByteView wire, std::span<const std::string_view> names,
                         std::span<std::string_view> values) noexcept {
  if (!ready_ || wire.size() > kMaxFrameSize || names.size() > 32 ||
      values.size() != names.size()) {
    return false;
  }
  // simdjson reads up to SIMDJSON_PADDING bytes past the input; fill them with whitespace so that
  // what it sees there never depends on an earlier, longer frame.
  std::memcpy(buffer_.get(), wire.data(), wire.size());
  std::memset(buffer_.get() + wire.size(), ' ', simdjson::SIMDJSON_PADDING);

  ondemand::document doc;
  if (parser_->parser.iterate(buffer_.get(), wire.size(), kBufferSize).get(doc) !=
      simdjson::SUCCESS) {
    return false;
  }
  ondemand::object object;
  if (doc.get_object().get(object) != simdjson::SUCCESS) return false;

  std::uint32_t seen = 0;
  for (auto member : object) {
    ondemand::field field;
    if (member.get(field) != simdjson::SUCCESS) return false;
    const std::size_t i = find_name(field.key().raw(), names);
    if (i == names.size()) return false;  // unknown (or escaped) name
    const std::uint32_t bit = std::uint32_t{1} << i;
    if ((seen & bit) != 0) return false;  // duplicate
    seen |= bit;
    // Not consumed: advancing the iterator skips the value, whatever it is.
    values[i] = trim_trailing_ws(field.value().raw_json_token());
  }
  const std::uint32_t all = names.size() == 32 ? ~std::uint32_t{0}
                                               : (std::uint32_t{1} << names.size()) - 1U;
  // at_end(): nothing but whitespace after the object's closing brace.
  return seen == all && doc.at_end();
}

}  // namespace dsekp::simd_detail
