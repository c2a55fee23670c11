// Encoder and strict decoder of the JSON profile (frame shapes in codec_json.hpp).
//
// Decoding has three stages: jsmn tokenizes into a fixed token array on the stack; a structural
// pass checks what jsmn's tokenizer lets through (it does not check commas, colons or trailing
// commas, nor what follows the top-level object); then each member is bound to a field of the
// expected frame and converted with its exact type, range and length rules.
#include "codec_json.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <span>
#include <string_view>

#include "base64.hpp"
#include "codec_limits.hpp"
#include "codec_writer.hpp"

// Header-only tokenizer, compiled into this file only. JSMN_STRICT makes it reject unquoted
// strings and primitives used as keys; it never allocates.
#define JSMN_STATIC
#define JSMN_STRICT
#include <jsmn.h>

namespace dsekp::codec_detail::json {
namespace {

using std::string_view;

// ---- Member names and the fixed text between values, shared by encoders and size bounds. ----

constexpr string_view kInitFields[] = {"v", "dev_id", "sessctr", "t", "dev_nonce", "proof"};
constexpr string_view kAckFields[] = {"v", "dev_id", "sessctr", "edge_nonce", "status", "proof"};
constexpr string_view kDataFields[] = {"seq", "dev_id", "sessctr_id", "ciphertext",
                                       "iv",  "tag",    "sendts_ms"};
constexpr string_view kPskFields[] = {"seq", "dev_id", "ciphertext", "iv", "tag", "sendts_ms"};
constexpr string_view kRekeyFields[] = {"v", "dev_id", "sessctr", "seq", "proof"};

// DATA/DOWN frame text around the values, in emission order.
constexpr string_view kDataOpen = R"({"seq":)";
constexpr string_view kDataDevId = R"(,"dev_id":")";
constexpr string_view kDataSessctr = R"(","sessctr_id":)";
constexpr string_view kDataCiphertext = R"(,"ciphertext":")";
constexpr string_view kDataIv = R"(","iv":")";
constexpr string_view kDataTag = R"(","tag":")";
constexpr string_view kDataSendts = R"(","sendts_ms":)";
constexpr string_view kClose = "}";

constexpr std::size_t kMaxMembers = std::size(kDataFields);
// The object token plus a key and a value token per member of the largest frame, and a little
// slack so that a small nested value is still tokenized and reported as json_wrong_type. Input
// needing more tokens than this (over 11 scalar members, or a large nested value) is rejected as
// json_too_many_fields. 23 tokens: 368 bytes of stack.
constexpr unsigned kMaxTokens = 1 + 2 * kMaxMembers + 8;

constexpr std::size_t kU16Digits = 5;
constexpr std::size_t kU32Digits = 10;
constexpr std::size_t kSendTsDigits = 16;  // 2^53 - 1 = 9007199254740991

// ---- Encoding helper (the encoders themselves follow the anonymous namespace). ----

Error finish(const Writer& w, std::size_t& written) noexcept {
  if (!w.ok()) return Error::buffer_too_small;
  written = w.size();
  return Error::ok;
}

// ---- Tokenizing and structure. ----

constexpr bool is_json_ws(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// True if text[from, to) is JSON whitespace around exactly one `sep` (or only whitespace when
// sep is '\0').
bool is_separator(string_view text, int from, int to, char sep) noexcept {
  if (from < 0 || to < from) return false;
  bool seen = sep == '\0';
  for (int i = from; i < to; ++i) {
    const char c = text[static_cast<std::size_t>(i)];
    if (is_json_ws(c)) continue;
    if (c != sep || seen) return false;
    seen = true;
  }
  return seen;
}

// jsmn reports a string token without its quotes; these give the token's full extent.
int raw_start(const jsmntok_t& t) noexcept {
  return t.type == JSMN_STRING ? t.start - 1 : t.start;
}
int raw_end(const jsmntok_t& t) noexcept {
  return t.type == JSMN_STRING ? t.end + 1 : t.end;
}

/// A tokenized JSON object whose structure has been checked: `members` key/value token pairs.
struct Document {
  string_view text;
  jsmntok_t tokens[kMaxTokens];
  std::size_t members = 0;

  [[nodiscard]] string_view slice(const jsmntok_t& t) const noexcept {
    // Built directly rather than with substr(), which can throw and so would pull the exception
    // runtime into the device build. jsmn guarantees 0 <= start <= end <= text.size().
    return string_view(text.data() + t.start, static_cast<std::size_t>(t.end - t.start));
  }
  [[nodiscard]] const jsmntok_t& key(std::size_t m) const noexcept { return tokens[1 + 2 * m]; }
  [[nodiscard]] const jsmntok_t& value(std::size_t m) const noexcept { return tokens[2 + 2 * m]; }
};

bool is_literal(string_view s) noexcept {
  return s == "true" || s == "false" || s == "null";
}

bool looks_numeric(string_view s) noexcept {
  return !s.empty() && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9'));
}

Error tokenize(string_view text, Document& doc) noexcept {
  doc.text = text;
  jsmn_parser parser;
  jsmn_init(&parser);
  const int count = jsmn_parse(&parser, text.data(), text.size(), doc.tokens, kMaxTokens);
  if (count < 0) {
    // If the top-level object had already closed, the tokenizer failed on what follows it.
    if (parser.toknext > 0 && doc.tokens[0].end >= 0) return Error::trailing_bytes;
    return count == JSMN_ERROR_NOMEM ? Error::json_too_many_fields : Error::json_syntax;
  }
  if (count < 1 || doc.tokens[0].type != JSMN_OBJECT) return Error::json_not_object;
  const jsmntok_t& object = doc.tokens[0];

  // jsmn stops at a NUL byte and happily tokenizes several top-level values; only JSON
  // whitespace may follow the frame's object.
  for (std::size_t i = static_cast<std::size_t>(object.end); i < text.size(); ++i) {
    if (!is_json_ws(text[i])) return Error::trailing_bytes;
  }

  // jsmn does not check separators (it accepts `{"a":1,}`, `{"a" "b"}` and the like), so check
  // that the text between tokens is exactly the JSON grammar's.
  int prev_end = object.start + 1;
  int next = 1;
  for (int m = 0; m < object.size; ++m) {
    if (next + 1 >= count) return Error::json_syntax;
    const jsmntok_t& key = doc.tokens[next];
    const jsmntok_t& value = doc.tokens[next + 1];
    if (key.type != JSMN_STRING || key.size != 1) return Error::json_syntax;
    if (!is_separator(text, prev_end, raw_start(key), m == 0 ? '\0' : ',')) {
      return Error::json_syntax;
    }
    // No frame member is an object or array; reject before looking at their inner tokens.
    if (value.type == JSMN_OBJECT || value.type == JSMN_ARRAY) return Error::json_wrong_type;
    if (value.size != 0 || !is_separator(text, raw_end(key), raw_start(value), ':')) {
      return Error::json_syntax;
    }
    // jsmn takes any run of printable non-delimiters after '-', a digit, 't', 'f' or 'n' as a
    // primitive. Words are syntax errors; anything number-like is left to parse_uint, which
    // reports bad_integer for every non-canonical spelling (even non-JSON ones like "0x1").
    if (value.type == JSMN_PRIMITIVE) {
      const string_view s = doc.slice(value);
      if (!is_literal(s) && !looks_numeric(s)) return Error::json_syntax;
    }
    prev_end = raw_end(value);
    next += 2;
  }
  if (next != count || !is_separator(text, prev_end, object.end - 1, '\0')) {
    return Error::json_syntax;
  }
  // No member-count limit here: an object with more members than its frame defines has an
  // unknown or a repeated one, which bind() names (the same name for every frame type). Only
  // the token budget above caps the count (at most 11 scalar members).
  doc.members = static_cast<std::size_t>(object.size);
  return Error::ok;
}

// ---- Binding members to fields. ----

/// Maps each name of `fields` to its value token; every name exactly once, no others.
Error bind(const Document& doc, std::span<const string_view> fields,
           const jsmntok_t** slots) noexcept {
  for (std::size_t i = 0; i < fields.size(); ++i) slots[i] = nullptr;
  for (std::size_t m = 0; m < doc.members; ++m) {
    // Keys are compared raw: a name spelled with escapes is not a name we define.
    const string_view name = doc.slice(doc.key(m));
    std::size_t i = 0;
    while (i < fields.size() && fields[i] != name) ++i;
    if (i == fields.size()) return Error::json_unknown_field;
    if (slots[i] != nullptr) return Error::json_duplicate_field;
    slots[i] = &doc.value(m);
  }
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (slots[i] == nullptr) return Error::json_missing_field;
  }
  return Error::ok;
}

// ---- Converting values. ----

Error parse_uint(string_view s, std::uint64_t max, std::uint64_t& out) noexcept {
  // Canonical decimal only: no sign, fraction, exponent or leading zero, so every value has one
  // spelling.
  if (s.empty() || s.size() > 20 || (s.size() > 1 && s[0] == '0')) return Error::bad_integer;
  std::uint64_t v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return Error::bad_integer;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (digit > max || v > (max - digit) / 10U) return Error::bad_integer;
    v = v * 10U + digit;
  }
  out = v;
  return Error::ok;
}

Error get_uint(const Document& doc, const jsmntok_t& t, std::uint64_t max,
               std::uint64_t& out) noexcept {
  if (t.type != JSMN_PRIMITIVE) return Error::json_wrong_type;
  const string_view s = doc.slice(t);
  if (is_literal(s)) return Error::json_wrong_type;
  return parse_uint(s, max, out);
}

template <typename T>
Error get_uint_as(const Document& doc, const jsmntok_t& t, std::uint64_t max, T& out) noexcept {
  std::uint64_t v = 0;
  if (const Error e = get_uint(doc, t, max, v); e != Error::ok) return e;
  out = static_cast<T>(v);  // in range: max fits T
  return Error::ok;
}

Error get_u16(const Document& doc, const jsmntok_t& t, std::uint16_t& out) noexcept {
  return get_uint_as(doc, t, UINT16_MAX, out);
}
Error get_u32(const Document& doc, const jsmntok_t& t, std::uint32_t& out) noexcept {
  return get_uint_as(doc, t, UINT32_MAX, out);
}

Error get_string(const Document& doc, const jsmntok_t& t, string_view& out) noexcept {
  if (t.type != JSMN_STRING) return Error::json_wrong_type;
  out = doc.slice(t);
  return Error::ok;
}

Error get_dev_id(const Document& doc, const jsmntok_t& t, DevId& out) noexcept {
  string_view s;
  if (const Error e = get_string(doc, t, s); e != Error::ok) return e;
  // The raw text is checked: an escape sequence puts a backslash outside the alphabet.
  return out.assign(s);
}

template <typename Fixed>
Error get_fixed(const Document& doc, const jsmntok_t& t, Fixed& out) noexcept {
  string_view s;
  if (const Error e = get_string(doc, t, s); e != Error::ok) return e;
  std::size_t n = 0;
  const Error e = base64::decode(s, out.mutable_view(), n);
  if (e == Error::buffer_too_small || (e == Error::ok && n != Fixed::size())) {
    return Error::bad_field_length;
  }
  return e;
}

// Decodes a base64 payload into `storage`; `n` is its length. payload_too_large if it decodes to
// more than kMaxPayloadSize bytes, buffer_too_small if only `storage` is too short.
Error get_payload(const Document& doc, const jsmntok_t& t, MutableByteView storage,
                  std::size_t& n) noexcept {
  n = 0;
  string_view s;
  if (const Error e = get_string(doc, t, s); e != Error::ok) return e;
  // Never more than the protocol's cap, however large the caller's buffer.
  const Error e = base64::decode(s, storage.first(std::min(storage.size(), kMaxPayloadSize)), n);
  if (e != Error::buffer_too_small) return e;
  // Only reported for valid base64 (whole groups), so its decoded length is exact.
  const std::size_t padding = s.ends_with("==") ? 2 : s.ends_with('=') ? 1 : 0;
  return s.size() / 4 * 3 - padding > kMaxPayloadSize ? Error::payload_too_large
                                                      : Error::buffer_too_small;
}

Error get_payload(const Document& doc, const jsmntok_t& t,
                  BoundedBytes<kMaxPayloadSize>& out) noexcept {
  std::size_t n = 0;
  if (const Error e = get_payload(doc, t, out.storage(), n); e != Error::ok) return e;
  return out.resize(n) ? Error::ok : Error::payload_too_large;
}

/// INIT and ACK carry `v`. It is checked before anything else so that a frame of a future version
/// (likely with other members) is reported as unsupported_version, not as an unknown member.
Error check_version(const Document& doc) noexcept {
  for (std::size_t m = 0; m < doc.members; ++m) {
    if (doc.slice(doc.key(m)) != "v") continue;
    std::uint64_t v = 0;
    if (const Error e = get_uint(doc, doc.value(m), UINT64_MAX, v); e != Error::ok) return e;
    return v == kProtocolVersion ? Error::ok : Error::unsupported_version;
  }
  return Error::ok;  // absent: bind() reports json_missing_field
}

string_view as_text(ByteView wire) noexcept {
  return {reinterpret_cast<const char*>(wire.data()), wire.size()};
}

// Runs each conversion in turn and returns the first error; later steps do not run after one.
template <typename... Steps>
Error all_of(Steps... steps) noexcept {
  Error first = Error::ok;
  ((first = first == Error::ok ? steps() : first), ...);
  return first;
}

// `{"v":1,"dev_id":"..","sessctr":N`: how INIT, ACK and REKEY begin.
void versioned_head(Writer& w, const DevId& dev_id, std::uint16_t sessctr) noexcept {
  w.text(R"({"v":)");
  w.decimal(kProtocolVersion);
  w.text(R"(,"dev_id":")");
  w.text(dev_id.str());
  w.text(R"(","sessctr":)");
  w.decimal(sessctr);
}

}  // namespace

Error encode(const InitFrame& f, MutableByteView out, std::size_t& written) noexcept {
  Writer w(out);
  versioned_head(w, f.dev_id, f.sessctr);
  w.text(R"(,"t":)");
  w.decimal(f.t);
  w.text(R"(,"dev_nonce":")");
  w.base64_text(f.dev_nonce.view());
  w.text(R"(","proof":")");
  w.base64_text(f.proof.view());
  w.text(R"("})");
  return finish(w, written);
}

Error encode(const AckFrame& f, MutableByteView out, std::size_t& written) noexcept {
  Writer w(out);
  versioned_head(w, f.dev_id, f.sessctr);
  w.text(R"(,"edge_nonce":")");
  w.base64_text(f.edge_nonce.view());
  w.text(R"(","status":)");
  w.decimal(f.status);
  w.text(R"(,"proof":")");
  w.base64_text(f.proof.view());
  w.text(R"("})");
  return finish(w, written);
}

Error encode(const DataFrameView& f, MutableByteView out, std::size_t& written) noexcept {
  Writer w(out);
  w.text(kDataOpen);
  w.decimal(f.seq);
  w.text(kDataDevId);
  w.text(f.dev_id.str());
  w.text(kDataSessctr);
  w.decimal(f.sessctr);
  w.text(kDataCiphertext);
  w.base64_text(f.ciphertext);  // may be the tail of `out` (codec.hpp)
  w.text(kDataIv);
  w.base64_text(f.iv.view());  // always written: the paper's receivers expect it
  w.text(kDataTag);
  w.base64_text(f.tag.view());
  w.text(kDataSendts);
  w.decimal(f.sendts_ms);
  w.text(kClose);
  return finish(w, written);
}

Error encode(const PskFrame& f, MutableByteView out, std::size_t& written) noexcept {
  Writer w(out);
  w.text(kDataOpen);
  w.decimal(f.seq);
  w.text(kDataDevId);
  w.text(f.dev_id.str());
  w.text(R"(","ciphertext":")");
  w.base64_text(f.ciphertext.view());
  w.text(kDataIv);
  w.base64_text(f.iv.view());
  w.text(kDataTag);
  w.base64_text(f.tag.view());
  w.text(kDataSendts);
  w.decimal(f.sendts_ms);
  w.text(kClose);
  return finish(w, written);
}

Error encode(const RekeyFrame& f, MutableByteView out, std::size_t& written) noexcept {
  Writer w(out);
  versioned_head(w, f.dev_id, f.sessctr);
  w.text(R"(,"seq":)");
  w.decimal(f.seq);
  w.text(R"(,"proof":")");
  w.base64_text(f.proof.view());
  w.text(R"("})");
  return finish(w, written);
}

std::size_t max_data_frame_size(std::size_t payload_size) noexcept {
  return kDataOpen.size() + kU32Digits + kDataDevId.size() + kDevIdMaxSize + kDataSessctr.size() +
         kU16Digits + kDataCiphertext.size() + base64::encoded_size(payload_size) + kDataIv.size() +
         base64::encoded_size(kNonceSize) + kDataTag.size() + base64::encoded_size(kTagSize) +
         kDataSendts.size() + kSendTsDigits + kClose.size();
}

Error decode_init(ByteView wire, InitFrame& out) noexcept {
  Document doc;
  const jsmntok_t* f[std::size(kInitFields)];  // value tokens, indexed like kInitFields
  if (const Error e = tokenize(as_text(wire), doc); e != Error::ok) return e;
  if (const Error e = check_version(doc); e != Error::ok) return e;
  if (const Error e = bind(doc, kInitFields, f); e != Error::ok) return e;
  return all_of([&] { return get_dev_id(doc, *f[1], out.dev_id); },
                [&] { return get_u16(doc, *f[2], out.sessctr); },
                [&] { return get_u32(doc, *f[3], out.t); },
                [&] { return get_fixed(doc, *f[4], out.dev_nonce); },
                [&] { return get_fixed(doc, *f[5], out.proof); });
}

Error decode_ack(ByteView wire, AckFrame& out) noexcept {
  Document doc;
  const jsmntok_t* f[std::size(kAckFields)];  // value tokens, indexed like kAckFields
  if (const Error e = tokenize(as_text(wire), doc); e != Error::ok) return e;
  if (const Error e = check_version(doc); e != Error::ok) return e;
  if (const Error e = bind(doc, kAckFields, f); e != Error::ok) return e;
  return all_of([&] { return get_dev_id(doc, *f[1], out.dev_id); },
                [&] { return get_u16(doc, *f[2], out.sessctr); },
                [&] { return get_fixed(doc, *f[3], out.edge_nonce); },
                [&] { return get_uint_as(doc, *f[4], UINT8_MAX, out.status); },
                [&] { return get_fixed(doc, *f[5], out.proof); });
}

Error decode_data(ByteView wire, Direction direction, DataFrameView& out,
                  MutableByteView ciphertext) noexcept {
  Document doc;
  const jsmntok_t* f[std::size(kDataFields)];  // value tokens, indexed like kDataFields
  if (const Error e = tokenize(as_text(wire), doc); e != Error::ok) return e;
  if (const Error e = bind(doc, kDataFields, f); e != Error::ok) return e;
  out.direction = direction;
  out.has_iv = true;
  out.ciphertext = ByteView();
  return all_of([&] { return get_u32(doc, *f[0], out.seq); },
                [&] { return get_dev_id(doc, *f[1], out.dev_id); },
                [&] { return get_u16(doc, *f[2], out.sessctr); },
                [&] {
                  std::size_t n = 0;
                  const Error e = get_payload(doc, *f[3], ciphertext, n);
                  out.ciphertext = ciphertext.first(n);
                  return e;
                },
                [&] { return get_fixed(doc, *f[4], out.iv); },
                [&] { return get_fixed(doc, *f[5], out.tag); },
                [&] { return get_uint_as(doc, *f[6], kMaxSendTs, out.sendts_ms); });
}

Error decode_psk(ByteView wire, PskFrame& out) noexcept {
  Document doc;
  const jsmntok_t* f[std::size(kPskFields)];  // value tokens, indexed like kPskFields
  if (const Error e = tokenize(as_text(wire), doc); e != Error::ok) return e;
  if (const Error e = bind(doc, kPskFields, f); e != Error::ok) return e;
  return all_of([&] { return get_u32(doc, *f[0], out.seq); },
                [&] { return get_dev_id(doc, *f[1], out.dev_id); },
                [&] { return get_payload(doc, *f[2], out.ciphertext); },
                [&] { return get_fixed(doc, *f[3], out.iv); },
                [&] { return get_fixed(doc, *f[4], out.tag); },
                [&] { return get_uint_as(doc, *f[5], kMaxSendTs, out.sendts_ms); });
}

Error decode_rekey(ByteView wire, RekeyFrame& out) noexcept {
  Document doc;
  const jsmntok_t* f[std::size(kRekeyFields)];  // value tokens, indexed like kRekeyFields
  if (const Error e = tokenize(as_text(wire), doc); e != Error::ok) return e;
  if (const Error e = check_version(doc); e != Error::ok) return e;
  if (const Error e = bind(doc, kRekeyFields, f); e != Error::ok) return e;
  return all_of([&] { return get_dev_id(doc, *f[1], out.dev_id); },
                [&] { return get_u16(doc, *f[2], out.sessctr); },
                [&] { return get_u32(doc, *f[3], out.seq); },
                [&] { return get_fixed(doc, *f[4], out.proof); });
}

}  // namespace dsekp::codec_detail::json
