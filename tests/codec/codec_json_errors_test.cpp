// One test per decoding error of the JSON profile, each run against every JSON decoder (INIT,
// ACK, DATA uplink, DATA downlink, PSK). Inputs are made by editing the canonical encoding of a
// sample frame, so each case differs from a valid frame in exactly the way it names.
#include <gtest/gtest.h>

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "codec_test_support.hpp"

namespace dsekp {
namespace {

using test::Bytes;

struct IntField {
  std::string name;
  std::uint64_t max;
};

struct Subject {
  std::string name;
  std::string canonical;                                   // encoding of the sample frame
  std::function<Error(std::string_view)> decode;           // the decoder under test
  std::vector<std::string> fields;                         // every member, in emission order
  std::vector<IntField> ints;                              // integer members and their maxima
  std::vector<std::pair<std::string, std::size_t>> fixed;  // fixed-size byte members
  std::string payload;                                     // variable byte member, or empty
  bool versioned = false;                                  // carries "v"
};

template <typename Frame>
std::function<Error(std::string_view)> decoder(Direction d = Direction::uplink) {
  return [d](std::string_view s) {
    Frame f;
    const Bytes wire = test::as_bytes(s);
    if constexpr (std::is_same_v<Frame, DataFrame>) {
      return test::decode_frame(wire, f, d);
    } else {
      return test::decode_frame(wire, f);
    }
  };
}

std::vector<Subject> subjects() {
  const std::vector<std::string> data_fields = {"seq", "dev_id", "sessctr_id", "ciphertext",
                                                "iv",  "tag",    "sendts_ms"};
  const std::vector<IntField> data_ints = {
      {"seq", UINT32_MAX}, {"sessctr_id", UINT16_MAX}, {"sendts_ms", test::kMaxSendTs}};
  const auto json = [](const auto& f) {
    return test::as_string(test::encode_to_bytes(f, Encoding::json));
  };
  return {
      {"Init",
       json(test::sample_init()),
       decoder<InitFrame>(),
       {"v", "dev_id", "sessctr", "t", "dev_nonce", "proof"},
       {{"sessctr", UINT16_MAX}, {"t", UINT32_MAX}},
       {{"dev_nonce", 12}, {"proof", 16}},
       "",
       true},
      {"Ack",
       json(test::sample_ack()),
       decoder<AckFrame>(),
       {"v", "dev_id", "sessctr", "edge_nonce", "status", "proof"},
       {{"sessctr", UINT16_MAX}, {"status", UINT8_MAX}},
       {{"edge_nonce", 12}, {"proof", 16}},
       "",
       true},
      {"DataUp",
       json(test::sample_data(Direction::uplink)),
       decoder<DataFrame>(Direction::uplink),
       data_fields,
       data_ints,
       {{"iv", 12}, {"tag", 16}},
       "ciphertext",
       false},
      {"DataDown",
       json(test::sample_data(Direction::downlink)),
       decoder<DataFrame>(Direction::downlink),
       data_fields,
       data_ints,
       {{"iv", 12}, {"tag", 16}},
       "ciphertext",
       false},
      {"Psk",
       json(test::sample_psk()),
       decoder<PskFrame>(),
       {"seq", "dev_id", "ciphertext", "iv", "tag", "sendts_ms"},
       {{"seq", UINT32_MAX}, {"sendts_ms", test::kMaxSendTs}},
       {{"iv", 12}, {"tag", 16}},
       "ciphertext",
       false},
      {"Rekey",
       json(test::sample_rekey()),
       decoder<RekeyFrame>(),
       {"v", "dev_id", "sessctr", "seq", "proof"},
       {{"sessctr", UINT16_MAX}, {"seq", UINT32_MAX}},
       {{"proof", 16}},
       "",
       true},
  };
}

// ---- Text edits on a canonical frame. ----

std::size_t member_pos(const std::string& s, const std::string& key) {
  const std::size_t pos = s.find('"' + key + "\":");
  EXPECT_NE(pos, std::string::npos) << key;
  return pos;
}

// [value start, value end) of member `key` in canonical (whitespace-free) text.
std::pair<std::size_t, std::size_t> value_span(const std::string& s, const std::string& key) {
  const std::size_t start = member_pos(s, key) + key.size() + 3;
  const std::size_t end =
      s[start] == '"' ? s.find('"', start + 1) + 1 : s.find_first_of(",}", start);
  return {start, end};
}

std::string set_value(std::string s, const std::string& key, const std::string& raw) {
  const auto [start, end] = value_span(s, key);
  return s.replace(start, end - start, raw);
}

std::string set_string(const std::string& s, const std::string& key, const std::string& text) {
  return set_value(s, key, '"' + text + '"');
}

std::string remove_member(std::string s, const std::string& key) {
  const std::size_t pos = member_pos(s, key);
  const std::size_t end = value_span(s, key).second;
  if (s[pos - 1] == ',') return s.erase(pos - 1, end - (pos - 1));
  return s.erase(pos, end + 1 - pos);  // first member: take the comma after it
}

std::string rename_key(std::string s, const std::string& key, const std::string& new_key) {
  return s.replace(member_pos(s, key) + 1, key.size(), new_key);
}

std::string add_member(std::string s, const std::string& member) {
  return s.insert(s.size() - 1, "," + member);
}

// Canonical base64 of `n` zero bytes.
std::string b64_zeros(std::size_t n) {
  std::string out((n / 3) * 4, 'A');
  if (n % 3 == 1) out += "AA==";
  if (n % 3 == 2) out += "AAA=";
  return out;
}

void PrintTo(const Subject& s, std::ostream* os) {
  *os << s.name;
}

std::vector<Subject> subjects_where(bool (*keep)(const Subject&)) {
  std::vector<Subject> out;
  for (Subject& s : subjects()) {
    if (keep(s)) out.push_back(std::move(s));
  }
  return out;
}

class JsonErrors : public ::testing::TestWithParam<Subject> {
 protected:
  const Subject& s() const { return GetParam(); }
  const std::string& canonical() const { return GetParam().canonical; }
  Error decode(const std::string& text) const { return GetParam().decode(text); }
};
// The same tests, for the frames that carry a version (INIT, ACK) or a payload (DATA, PSK).
class JsonVersionErrors : public JsonErrors {};
class JsonPayloadErrors : public JsonErrors {};

const auto kSubjectName = [](const auto& param_info) { return param_info.param.name; };
INSTANTIATE_TEST_SUITE_P(AllJsonDecoders, JsonErrors, ::testing::ValuesIn(subjects()),
                         kSubjectName);
INSTANTIATE_TEST_SUITE_P(VersionedJsonDecoders, JsonVersionErrors,
                         ::testing::ValuesIn(subjects_where([](const Subject& s) {
                           return s.versioned;
                         })),
                         kSubjectName);
INSTANTIATE_TEST_SUITE_P(PayloadJsonDecoders, JsonPayloadErrors,
                         ::testing::ValuesIn(subjects_where([](const Subject& s) {
                           return !s.payload.empty();
                         })),
                         kSubjectName);

TEST_P(JsonErrors, CanonicalFrameDecodes) {
  EXPECT_EQ(decode(canonical()), Error::ok);
}

TEST_P(JsonErrors, AcceptsAnyMemberOrderAndJsonWhitespace) {
  // Reverse the members.
  std::string reversed = "{";
  for (std::size_t i = s().fields.size(); i-- > 0;) {
    const auto [start, end] = value_span(canonical(), s().fields[i]);
    reversed += '"' + s().fields[i] + "\":" + canonical().substr(start, end - start);
    reversed += i > 0 ? "," : "}";
  }
  EXPECT_EQ(decode(reversed), Error::ok) << reversed;
  // Whitespace around every structural character (not before the opening brace).
  std::string spaced;
  bool in_string = false;
  for (const char c : canonical()) {
    if (c == '"') in_string = !in_string;
    const bool structural = !in_string && (c == ':' || c == ',' || c == '}');
    if (structural) spaced += " \t\r\n";
    spaced += c;
    if (structural || (c == '{' && spaced.size() == 1)) spaced += "\n ";
  }
  EXPECT_EQ(decode(spaced), Error::ok) << spaced;
}

TEST_P(JsonErrors, FrameEmpty) {
  EXPECT_EQ(decode(""), Error::frame_empty);
}

TEST_P(JsonErrors, FrameTooLarge) {
  std::string padded = canonical();
  padded.insert(padded.size() - 1, kMaxFrameSize - padded.size(), ' ');
  ASSERT_EQ(padded.size(), kMaxFrameSize);
  EXPECT_EQ(decode(padded), Error::ok);  // the cap itself is allowed
  padded.insert(padded.size() - 1, " ");
  EXPECT_EQ(decode(padded), Error::frame_too_large);
  EXPECT_EQ(decode(canonical() + std::string(kMaxFrameSize, ' ')), Error::frame_too_large);
}

TEST_P(JsonErrors, UnknownFrameTypeForLeadingWhitespace) {
  // Detection is by the first byte only; a frame that does not start with '{' is not JSON.
  EXPECT_EQ(decode(" " + canonical()), Error::unknown_frame_type);
  EXPECT_EQ(decode("\n" + canonical()), Error::unknown_frame_type);
  EXPECT_EQ(decode("[" + canonical() + "]"), Error::unknown_frame_type);
}

TEST_P(JsonErrors, TrailingBytes) {
  for (const std::string& tail :
       {std::string("x"), std::string("{}"), std::string("}"), std::string(" 1"), std::string("\""),
        std::string(1, '\0'), std::string("\n,"), canonical()}) {
    EXPECT_EQ(decode(canonical() + tail), Error::trailing_bytes) << tail;
  }
  EXPECT_EQ(decode(canonical() + " \t\r\n"), Error::ok);  // whitespace may follow
}

TEST_P(JsonErrors, JsonSyntax) {
  const std::string& c = canonical();
  const std::string first = s().fields[0];
  const std::string second = s().fields[1];
  const std::string int_field = s().ints[0].name;
  const std::vector<std::string> bad = {
      c.substr(0, c.size() - 1),                                // unclosed object
      "{",                                                      // only the brace
      add_member(c, ""),                                        // trailing comma
      std::string(c).insert(1, ","),                            // leading comma
      std::string(c).replace(c.find(",\"" + second), 1, ",,"),  // double comma
      std::string(c).replace(c.find(",\"" + second), 1, " "),   // missing comma
      std::string(c).replace(c.find("\"" + second + "\":") + second.size() + 2, 1,
                             " "),                                                    // no colon
      std::string(c).insert(c.find("\"" + second + "\":") + second.size() + 2, ":"),  // "::"
      set_value(c, "dev_id", "\"a\" \"b\""),                               // two strings in a row
      set_value(c, int_field, "trux"),                                     // bare word
      set_value(c, int_field, "nul"),                                      // truncated literal
      set_value(c, "dev_id", "'esp32-01'"),                                // single quotes
      c.substr(0, value_span(c, "dev_id").first + 3),                      // unterminated string
      std::string(c).insert(c.size() - 1, std::string(1, '\0')),           // NUL inside the object
      std::string(c).replace(value_span(c, "dev_id").first, 0, "\"a\":"),  // key as value
      set_value(c, first, ""),                                             // key without a value
      std::string(c).replace(c.size() - 1, 1, "]"),                        // mismatched bracket
  };
  for (const std::string& text : bad) EXPECT_EQ(decode(text), Error::json_syntax) << text;
}

TEST_P(JsonErrors, JsonTooManyFields) {
  // Only the tokenizer's budget counts (PROTOCOL.md 7, precedence): up to 11 members an extra one
  // is named by its name (json_unknown_field), whatever the frame; 12 are too many for any frame.
  std::string text = canonical();
  for (std::size_t i = s().fields.size(); i < 12; ++i) {
    text = add_member(text, "\"x" + std::to_string(i) + "\":1");
    if (i < 11) {
      EXPECT_EQ(decode(text), Error::json_unknown_field) << text;
    }
  }
  EXPECT_EQ(decode(text), Error::json_too_many_fields) << text;
  // Tokens, not members, are counted: a long array value overflows the token budget as well.
  EXPECT_EQ(decode(set_value(canonical(), s().ints[0].name, "[1,2,3,4,5,6,7,8,9,10,11,12,13,14]")),
            Error::json_too_many_fields);
}

TEST_P(JsonErrors, JsonUnknownField) {
  EXPECT_EQ(decode(rename_key(canonical(), "dev_id", "devid")), Error::json_unknown_field);
  EXPECT_EQ(decode(rename_key(canonical(), "dev_id", "Dev_id")), Error::json_unknown_field);
  // Member names are compared as written: an escaped spelling is not the name.
  EXPECT_EQ(decode(rename_key(canonical(), "dev_id", "dev\\u005fid")), Error::json_unknown_field);
  EXPECT_EQ(decode(rename_key(canonical(), s().fields.back(), "")), Error::json_unknown_field);
  if (s().fields.size() < 7) {
    EXPECT_EQ(decode(add_member(canonical(), "\"extra\":1")), Error::json_unknown_field);
  }
  if (!s().versioned) {
    // Frames without a version reject one rather than ignore it.
    EXPECT_EQ(decode(rename_key(canonical(), s().fields.back(), "v")), Error::json_unknown_field);
  }
}

TEST_P(JsonErrors, JsonDuplicateField) {
  // Renaming the last member to the first's name: same member count, one name twice.
  EXPECT_EQ(decode(rename_key(canonical(), s().fields.back(), s().fields[1])),
            Error::json_duplicate_field);
  // A complete frame with one member repeated is json_duplicate_field for every frame type (it
  // was json_too_many_fields for the 7-member DATA frame only), and so is one with several.
  const auto [id_start, id_end] = value_span(canonical(), "dev_id");
  const std::string repeated =
      add_member(canonical(), "\"dev_id\":" + canonical().substr(id_start, id_end - id_start));
  EXPECT_EQ(decode(repeated), Error::json_duplicate_field) << repeated;
  EXPECT_EQ(decode(add_member(add_member(repeated, "\"dev_id\":\"a\""), "\"dev_id\":\"b\"")),
            Error::json_duplicate_field);
  if (s().fields.size() < 7) {
    const auto [start, end] = value_span(canonical(), "dev_id");
    EXPECT_EQ(
        decode(add_member(canonical(), "\"dev_id\":" + canonical().substr(start, end - start))),
        Error::json_duplicate_field);
  }
}

TEST_P(JsonErrors, JsonMissingField) {
  for (const std::string& field : s().fields) {
    EXPECT_EQ(decode(remove_member(canonical(), field)), Error::json_missing_field) << field;
  }
  EXPECT_EQ(decode("{}"), Error::json_missing_field);
  EXPECT_EQ(decode("{ }"), Error::json_missing_field);
}

TEST_P(JsonErrors, JsonWrongType) {
  const std::string& c = canonical();
  for (const std::string& field : s().fields) {
    for (const char* raw : {"{}", "[]", "[1]", "{\"a\":1}", "true", "false", "null"}) {
      EXPECT_EQ(decode(set_value(c, field, raw)), Error::json_wrong_type) << field << '=' << raw;
    }
  }
  for (const IntField& f : s().ints) {
    EXPECT_EQ(decode(set_string(c, f.name, "7")), Error::json_wrong_type) << f.name;
  }
  for (const auto& [name, size] : s().fixed) {
    EXPECT_EQ(decode(set_value(c, name, "7")), Error::json_wrong_type) << name;
  }
  EXPECT_EQ(decode(set_value(c, "dev_id", "123")), Error::json_wrong_type);
  if (!s().payload.empty()) {
    EXPECT_EQ(decode(set_value(c, s().payload, "0")), Error::json_wrong_type);
  }
  if (s().versioned) {
    EXPECT_EQ(decode(set_string(c, "v", "1")), Error::json_wrong_type);
  }
}

TEST_P(JsonErrors, BadInteger) {
  const std::string& c = canonical();
  for (const IntField& f : s().ints) {
    EXPECT_EQ(decode(set_value(c, f.name, std::to_string(f.max))), Error::ok) << f.name;
    EXPECT_EQ(decode(set_value(c, f.name, "0")), Error::ok) << f.name;
    for (const std::string& raw :
         {std::to_string(f.max + 1), std::string("00"), std::string("01"), std::string("-1"),
          std::string("-0"), std::string("1.0"), std::string("1e3"), std::string("0x1"),
          std::string("1a"), std::string("-"), std::string("18446744073709551616"),
          std::string("7:8"),  // jsmn's strict mode keeps ':' inside a primitive
          std::string("123456789012345678901234")}) {
      EXPECT_EQ(decode(set_value(c, f.name, raw)), Error::bad_integer) << f.name << '=' << raw;
    }
  }
  if (s().versioned) {
    EXPECT_EQ(decode(set_value(c, "v", "01")), Error::bad_integer);
    EXPECT_EQ(decode(set_value(c, "v", "1.0")), Error::bad_integer);
    EXPECT_EQ(decode(set_value(c, "v", "-1")), Error::bad_integer);
  }
}

TEST_P(JsonErrors, BadBase64) {
  const std::string& c = canonical();
  std::vector<std::string> fields;
  for (const auto& [name, size] : s().fixed) fields.push_back(name);
  if (!s().payload.empty()) fields.push_back(s().payload);
  for (const std::string& field : fields) {
    const auto [start, end] = value_span(c, field);
    const std::string value = c.substr(start + 1, end - start - 2);
    ASSERT_GE(value.size(), 4U) << field;
    const std::vector<std::string> bad = {
        value + "A",                                   // not whole groups
        value.substr(0, value.size() - 1),             // not whole groups
        "-" + value.substr(1),                         // base64url alphabet
        "_" + value.substr(1),                         // base64url alphabet
        " " + value.substr(1),                         // whitespace
        value.substr(0, 2) + "\\/" + value.substr(4),  // JSON escape
        "\\u0041" + value.substr(1),                   // JSON unicode escape
        value.substr(0, value.size() - 4) + "====",    // padding only
    };
    for (const std::string& text : bad) {
      EXPECT_EQ(decode(set_string(c, field, text)), Error::bad_base64) << field << '=' << text;
    }
  }
  for (const auto& [name, size] : s().fixed) {
    // Unused bits set in the last group: "AA==" is the canonical 1-byte tail, "AB==" is not.
    if (size % 3 == 1) {
      const std::string good = b64_zeros(size);
      EXPECT_EQ(decode(set_string(c, name, good)), Error::ok) << name;
      std::string bad = good;
      bad[bad.size() - 3] = 'B';
      EXPECT_EQ(decode(set_string(c, name, bad)), Error::bad_base64) << name << '=' << bad;
      EXPECT_EQ(decode(set_string(c, name, good.substr(0, good.size() - 2))), Error::bad_base64)
          << name;  // padding stripped
    }
  }
  if (!s().payload.empty()) {
    EXPECT_EQ(decode(set_string(c, s().payload, "AAB=")), Error::bad_base64);  // unused bits
    EXPECT_EQ(decode(set_string(c, s().payload, "AA")), Error::bad_base64);    // no padding
  }
}

TEST_P(JsonErrors, BadFieldLength) {
  for (const auto& [name, size] : s().fixed) {
    for (const std::size_t n : {std::size_t{0}, size - 1, size + 1, size + 3, std::size_t{100}}) {
      EXPECT_EQ(decode(set_string(canonical(), name, b64_zeros(n))), Error::bad_field_length)
          << name << " with " << n << " bytes";
    }
    EXPECT_EQ(decode(set_string(canonical(), name, b64_zeros(size))), Error::ok) << name;
  }
}

TEST_P(JsonErrors, BadDevId) {
  const std::string& c = canonical();
  EXPECT_EQ(decode(set_string(c, "dev_id", "a")), Error::ok);
  EXPECT_EQ(decode(set_string(c, "dev_id", std::string(64, 'd'))), Error::ok);
  for (const std::string& id :
       {std::string(""), std::string(65, 'd'), std::string("esp/32"), std::string("esp 32"),
        std::string("esp+32"), std::string("esp#32"), std::string("esp32\\u002d01"),
        std::string("esp32\\/01"), std::string("esp32\\\\01"), std::string("\xc3\xa9sp32"),
        std::string("esp\x01")}) {
    EXPECT_EQ(decode(set_string(c, "dev_id", id)), Error::bad_dev_id) << id;
  }
}

TEST_P(JsonVersionErrors, UnsupportedVersion) {
  const std::string& c = canonical();
  for (const char* v : {"0", "2", "255", "18446744073709551615"}) {
    EXPECT_EQ(decode(set_value(c, "v", v)), Error::unsupported_version) << v;
  }
  EXPECT_EQ(decode(set_value(c, "v", "18446744073709551616")), Error::bad_integer);
  // The version is judged first: a future frame's other members do not matter.
  const std::string future = set_value(c, "v", "2");
  EXPECT_EQ(decode(add_member(future, "\"cipher\":\"x\"")), Error::unsupported_version);
  EXPECT_EQ(decode(remove_member(future, "proof")), Error::unsupported_version);
  EXPECT_EQ(decode("{\"v\":3}"), Error::unsupported_version);
}

TEST_P(JsonPayloadErrors, PayloadTooLarge) {
  const std::string& c = canonical();
  EXPECT_EQ(decode(set_string(c, s().payload, b64_zeros(kMaxPayloadSize))), Error::ok);
  for (const std::size_t n : {kMaxPayloadSize + 1, kMaxPayloadSize + 2, kMaxPayloadSize + 3}) {
    const std::string text = set_string(c, s().payload, b64_zeros(n));
    ASSERT_LE(text.size(), kMaxFrameSize);
    EXPECT_EQ(decode(text), Error::payload_too_large) << n;
  }
  EXPECT_EQ(decode(set_string(c, s().payload, "")), Error::ok);  // empty ciphertext is fine
}

}  // namespace
}  // namespace dsekp
