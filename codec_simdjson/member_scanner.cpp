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
#include <utility>

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

// True if the member name at `key` (just past its opening quote) is `name` exactly: its bytes
// follow and then a quote, which cannot be escaped because no name ends in a backslash. Reads at
// most name.size() + 1 bytes, which stays inside the input's padding.
bool is_name(const char* key, std::string_view name) noexcept {
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (key[i] != name[i]) return false;
  }
  return key[name.size()] == '"';
}

// The index of the name at `key` in `names`, or names.size(). Senders write the members in the
// encoders' order, so the search starts at the member's position `hint` and usually ends there.
std::size_t find_name(const char* key, std::span<const std::string_view> names,
                      std::size_t hint) noexcept {
  std::size_t i = hint < names.size() ? hint : 0;
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (is_name(key, names[i])) return i;
    if (++i == names.size()) i = 0;
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
  std::size_t position = 0;
  for (auto member : object) {
    ondemand::field field;
    if (std::move(member).get(field) != simdjson::SUCCESS) return false;
    const std::size_t i = find_name(field.key().raw(), names, position++);
    if (i == names.size()) return false;  // unknown (or escaped) name
    const std::uint32_t bit = std::uint32_t{1} << i;
    if ((seen & bit) != 0) return false;  // duplicate
    seen |= bit;
    // Not consumed: advancing the iterator skips the value, whatever it is. simdjson 3.0's skip
    // does not check what follows a skipped string (it takes `"s":` for a key and skips on), so
    // the byte after the value's token must be the member separator or the object's end; the raw
    // token runs up to the next token and the input is padded, so that byte is readable.
    const std::string_view raw = field.value().raw_json_token();
    const char next = raw.data()[raw.size()];
    if (next != ',' && next != '}') return false;
    values[i] = trim_trailing_ws(raw);
  }
  const std::uint32_t all =
      names.size() == 32 ? ~std::uint32_t{0} : (std::uint32_t{1} << names.size()) - 1U;
  // Nothing but whitespace after the object's closing brace: no token left. simdjson 3.0 has no
  // document::at_end(); current_location() reports the end as OUT_OF_BOUNDS.
  return seen == all && doc.current_location().error() == simdjson::OUT_OF_BOUNDS;
}

}  // namespace dsekp::simd_detail
