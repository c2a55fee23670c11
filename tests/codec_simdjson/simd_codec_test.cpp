// Unit tests of SimdJsonDecoder (codec_simdjson/simd_codec.hpp): the fast path takes every valid
// layout, limits and buffer reuse, compact delegation, and one case per decoding error with the
// exact error name the portable decoder gives (the header documents no differences). Inputs are
// edits of the canonical encoding of a sample frame, so each differs from a valid frame only in
// the way it names. Traps specific to simdjson (UTF-8, control characters, tokens it splits
// differently from jsmn) have their own cases.
#include "codec_simdjson/simd_codec.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codec_test_support.hpp"

namespace dsekp {
namespace {

using test::Bytes;

std::string json_of(const DataFrame& f) {
  return test::as_string(test::encode_to_bytes(f, Encoding::json));
}
std::string json_of(const PskFrame& f) {
  return test::as_string(test::encode_to_bytes(f, Encoding::json));
}

// Replaces the raw value of member `key` in whitespace-free text.
std::string set_value(std::string s, const std::string& key, const std::string& raw) {
  const std::size_t start = s.find('"' + key + "\":") + key.size() + 3;
  const std::size_t end =
      s[start] == '"' ? s.find('"', start + 1) + 1 : s.find_first_of(",}", start);
  return s.replace(start, end - start, raw);
}
std::string set_string(const std::string& s, const std::string& key, const std::string& text) {
  return set_value(s, key, '"' + text + '"');
}
std::string rename_key(std::string s, const std::string& key, const std::string& new_key) {
  return s.replace(s.find('"' + key + "\":") + 1, key.size(), new_key);
}
std::string add_member(std::string s, const std::string& member) {
  return s.insert(s.size() - 1, "," + member);
}
std::string b64_zeros(std::size_t n) {
  std::string out((n / 3) * 4, 'A');
  if (n % 3 == 1) out += "AA==";
  if (n % 3 == 2) out += "AAA=";
  return out;
}

class SimdCodec : public ::testing::Test {
 protected:
  // Decodes with both decoders; checks they agree (verdict, and values when ok) and returns the
  // verdict. The simd decoder decodes into a reused, dirty frame, as an edge would.
  Error data(const std::string& text, Direction d = Direction::uplink) {
    const Bytes wire = test::as_bytes(text);
    DataFrame expected;
    const Error portable = decode_data(wire, d, expected);
    const Error simd = decoder_.decode_data(wire, d, data_out_);
    EXPECT_EQ(simd, portable) << text;
    if (simd == Error::ok && portable == Error::ok) {
      EXPECT_EQ(data_out_, expected) << text;
    }
    return simd;
  }
  Error psk(const std::string& text) {
    const Bytes wire = test::as_bytes(text);
    PskFrame expected;
    const Error portable = decode_psk(wire, expected);
    const Error simd = decoder_.decode_psk(wire, psk_out_);
    EXPECT_EQ(simd, portable) << text;
    if (simd == Error::ok && portable == Error::ok) {
      EXPECT_EQ(psk_out_, expected) << text;
    }
    return simd;
  }
  // Expects `text` to be accepted by the fast path (not by the fallback).
  void expect_fast_data(const std::string& text) {
    const auto before = decoder_.stats();
    EXPECT_EQ(data(text), Error::ok) << text;
    EXPECT_EQ(decoder_.stats().fast_accepts, before.fast_accepts + 1) << text;
    EXPECT_EQ(decoder_.stats().portable_fallbacks, before.portable_fallbacks) << text;
  }

  SimdJsonDecoder decoder_;
  // Outputs start dirty (another frame's values), as a reused edge buffer would be.
  DataFrame data_out_ = test::sample_data(Direction::downlink, 40);
  PskFrame psk_out_ = test::sample_psk(7);
  const std::string data_ = json_of(test::sample_data(Direction::uplink, 19));
  const std::string psk_ = json_of(test::sample_psk(19));
};

// ---- Valid frames take the fast path. ----

TEST_F(SimdCodec, CanonicalFramesTakeTheFastPath) {
  expect_fast_data(data_);
  EXPECT_EQ(data(json_of(test::sample_data(Direction::downlink, 0)), Direction::downlink),
            Error::ok);
  EXPECT_EQ(data_out_.direction, Direction::downlink);
  EXPECT_TRUE(data_out_.has_iv);
  EXPECT_EQ(data_out_.ciphertext.size(), 0U);
  EXPECT_EQ(psk(psk_), Error::ok);
  EXPECT_EQ(decoder_.stats().fast_accepts, 3U);
  EXPECT_EQ(decoder_.stats().portable_fallbacks, 0U);
}

TEST_F(SimdCodec, AnyMemberOrderAndJsonWhitespaceTakeTheFastPath) {
  expect_fast_data(
      R"({"sendts_ms":1700000000123,"tag":"0NHS09TV1tfY2drb3N3e3w==","iv":"wMHCw8TFxsfIycrL",)"
      R"("ciphertext":"aGVsbG8=","sessctr_id":54321,"dev_id":"esp32-01","seq":7})");
  // Whitespace around every token, and after the object.
  std::string spaced;
  bool in_string = false;
  for (const char c : data_) {
    if (c == '"') in_string = !in_string;
    const bool structural = !in_string && (c == ':' || c == ',' || c == '}');
    if (structural) spaced += " \t\r\n";
    spaced += c;
    if (structural || (c == '{' && spaced.size() == 1)) spaced += "\n ";
  }
  expect_fast_data(spaced);
  expect_fast_data(data_ + " \t\r\n");
}

TEST_F(SimdCodec, LimitsOfPayloadAndFrameSize) {
  expect_fast_data(set_string(data_, "ciphertext", b64_zeros(kMaxPayloadSize)));
  EXPECT_EQ(data(set_string(data_, "ciphertext", b64_zeros(kMaxPayloadSize + 1))),
            Error::payload_too_large);
  EXPECT_EQ(psk(set_string(psk_, "ciphertext", b64_zeros(kMaxPayloadSize + 2))),
            Error::payload_too_large);
  std::string padded = data_;
  padded.insert(padded.size() - 1, kMaxFrameSize - padded.size(), ' ');
  expect_fast_data(padded);  // exactly kMaxFrameSize
  EXPECT_EQ(data(padded + " "), Error::frame_too_large);
  EXPECT_EQ(data(""), Error::frame_empty);
  EXPECT_EQ(data(std::string(kMaxFrameSize + 1, '{')), Error::frame_too_large);
}

TEST_F(SimdCodec, IntegerLimits) {
  expect_fast_data(set_value(data_, "seq", "4294967295"));
  expect_fast_data(set_value(data_, "sessctr_id", "65535"));
  expect_fast_data(set_value(data_, "sendts_ms", "9007199254740991"));
  expect_fast_data(set_value(data_, "seq", "0"));
  EXPECT_EQ(data(set_value(data_, "seq", "4294967296")), Error::bad_integer);
  EXPECT_EQ(data(set_value(data_, "sessctr_id", "65536")), Error::bad_integer);
  EXPECT_EQ(data(set_value(data_, "sendts_ms", "9007199254740992")), Error::bad_integer);
  EXPECT_EQ(psk(set_value(psk_, "sendts_ms", "18446744073709551616")), Error::bad_integer);
}

TEST_F(SimdCodec, ReuseAfterLongerFrameSeesNoLeftovers) {
  // A long frame leaves bytes in the decoder's buffer; a shorter frame that is cut just where the
  // long one continues must not be completed by them.
  const std::string long_frame = set_string(data_, "ciphertext", b64_zeros(600));
  expect_fast_data(long_frame);
  const std::string cut = long_frame.substr(0, 300);
  EXPECT_EQ(data(cut), Error::json_syntax);
  expect_fast_data(data_);
  EXPECT_EQ(data(data_.substr(0, data_.size() - 1)), Error::json_syntax);
}

TEST_F(SimdCodec, CompactFramesAreDelegated) {
  const DataFrame up = test::sample_data(Direction::uplink, 19);
  const Bytes wire = test::encode_to_bytes(up, Encoding::compact);
  EXPECT_EQ(decoder_.decode_data(wire, Direction::uplink, data_out_), Error::ok);
  EXPECT_EQ(data_out_, test::as_received(up, Encoding::compact));
  EXPECT_EQ(decoder_.decode_data(wire, Direction::downlink, data_out_), Error::unknown_frame_type);
  EXPECT_EQ(decoder_.decode_data(ByteView(wire.data(), 10), Direction::uplink, data_out_),
            Error::truncated);
  const Bytes psk_wire = test::encode_to_bytes(test::sample_psk(19), Encoding::compact);
  EXPECT_EQ(decoder_.decode_psk(psk_wire, psk_out_), Error::ok);
  EXPECT_EQ(psk_out_, test::sample_psk(19));
  // Compact frames are not JSON frames: neither counter moves.
  EXPECT_EQ(decoder_.stats().fast_accepts, 0U);
  EXPECT_EQ(decoder_.stats().portable_fallbacks, 0U);
}

TEST_F(SimdCodec, MovedFromDecoderStillDecodes) {
  SimdJsonDecoder moved = std::move(decoder_);
  DataFrame f;
  EXPECT_EQ(moved.decode_data(test::as_bytes(data_), Direction::uplink, f), Error::ok);
  EXPECT_EQ(moved.stats().fast_accepts, 1U);
  // NOLINTNEXTLINE(bugprone-use-after-move): documented to fall back to the portable decoder.
  EXPECT_EQ(decoder_.decode_data(test::as_bytes(data_), Direction::uplink, f), Error::ok);
  EXPECT_EQ(decoder_.decode_data(test::as_bytes(data_ + "x"), Direction::uplink, f),
            Error::trailing_bytes);
}

// ---- Each error, with the portable decoder's name. ----

TEST_F(SimdCodec, RejectionsUseThePortableFallback) {
  const auto before = decoder_.stats();
  EXPECT_EQ(data(data_ + "x"), Error::trailing_bytes);
  EXPECT_EQ(decoder_.stats().portable_fallbacks, before.portable_fallbacks + 1);
  EXPECT_EQ(decoder_.stats().fast_accepts, before.fast_accepts);
}

TEST_F(SimdCodec, UnknownFrameType) {
  EXPECT_EQ(data(" " + data_), Error::unknown_frame_type);
  EXPECT_EQ(data("[" + data_ + "]"), Error::unknown_frame_type);
  EXPECT_EQ(psk("\n" + psk_), Error::unknown_frame_type);
}

TEST_F(SimdCodec, TrailingBytes) {
  for (const std::string& tail :
       {std::string("x"), std::string("{}"), std::string("}"), std::string(" 1"), std::string("\""),
        std::string(1, '\0'), std::string("\n,"), std::string("\v"), data_}) {
    EXPECT_EQ(data(data_ + tail), Error::trailing_bytes) << tail;
    EXPECT_EQ(psk(psk_ + tail), Error::trailing_bytes) << tail;
  }
}

TEST_F(SimdCodec, JsonSyntax) {
  const std::string& c = data_;
  for (const std::string& text : {
           c.substr(0, c.size() - 1),                                  // unclosed object
           std::string("{"),                                           // only the brace
           add_member(c, ""),                                          // trailing comma
           std::string(c).insert(1, ","),                              // leading comma
           std::string(c).replace(c.find(",\"dev_id"), 1, ",,"),       // double comma
           std::string(c).replace(c.find(",\"dev_id"), 1, " "),        // missing comma
           std::string(c).replace(c.find("\"dev_id\":") + 8, 1, " "),  // no colon
           set_value(c, "dev_id", "\"a\" \"b\""),                      // two strings in a row
           set_value(c, "seq", "trux"),                                // bare word
           set_value(c, "dev_id", "'esp32-01'"),                       // single quotes
           c.substr(0, c.find("\"dev_id\":") + 12),                    // unterminated string
           std::string(c).insert(c.size() - 1, std::string(1, '\0')),  // NUL inside the object
           std::string(c).replace(c.size() - 1, 1, "]"),               // mismatched bracket
           set_string(c, "dev_id", "esp\\x"),                          // invalid escape
           set_string(c, "dev_id", "esp\\u12"),                        // short \u escape
       }) {
    EXPECT_EQ(data(text), Error::json_syntax) << text;
  }
}

TEST_F(SimdCodec, JsonTooManyFields) {
  std::string text = data_;
  for (int i = 0; i < 5; ++i) text = add_member(text, "\"x" + std::to_string(i) + "\":1");
  EXPECT_EQ(data(text), Error::json_too_many_fields);
  EXPECT_EQ(data(set_value(data_, "seq", "[1,2,3,4,5,6,7,8,9,10,11,12,13,14]")),
            Error::json_too_many_fields);
  // Fewer than 12 members: the extra one is named by its name, as the portable decoder does.
  EXPECT_EQ(psk(add_member(add_member(psk_, "\"a\":1"), "\"b\":2")), Error::json_unknown_field);
}

TEST_F(SimdCodec, JsonUnknownField) {
  EXPECT_EQ(data(rename_key(data_, "dev_id", "devid")), Error::json_unknown_field);
  EXPECT_EQ(data(rename_key(data_, "dev_id", "dev\\u005fid")), Error::json_unknown_field);
  EXPECT_EQ(data(rename_key(data_, "seq", "seq\\\"")), Error::json_unknown_field);
  EXPECT_EQ(data(rename_key(data_, "seq", "se")), Error::json_unknown_field);
  EXPECT_EQ(data(rename_key(data_, "seq", "seqq")), Error::json_unknown_field);
  EXPECT_EQ(data(rename_key(data_, "sendts_ms", "")), Error::json_unknown_field);
  EXPECT_EQ(psk(add_member(psk_, "\"sessctr_id\":1")), Error::json_unknown_field);
}

TEST_F(SimdCodec, JsonDuplicateField) {
  EXPECT_EQ(data(rename_key(data_, "sendts_ms", "dev_id")), Error::json_duplicate_field);
  EXPECT_EQ(psk(add_member(psk_, "\"seq\":1")), Error::json_duplicate_field);
}

TEST_F(SimdCodec, JsonMissingField) {
  EXPECT_EQ(data("{}"), Error::json_missing_field);
  EXPECT_EQ(data(R"({"seq":1})"), Error::json_missing_field);
  EXPECT_EQ(data(psk_), Error::json_missing_field);  // a PSK frame lacks sessctr_id
}

TEST_F(SimdCodec, JsonWrongType) {
  for (const char* raw : {"{}", "[]", "[1]", "{\"a\":1}", "true", "false", "null"}) {
    EXPECT_EQ(data(set_value(data_, "seq", raw)), Error::json_wrong_type) << raw;
    EXPECT_EQ(data(set_value(data_, "iv", raw)), Error::json_wrong_type) << raw;
  }
  EXPECT_EQ(data(set_string(data_, "seq", "7")), Error::json_wrong_type);
  EXPECT_EQ(data(set_value(data_, "dev_id", "123")), Error::json_wrong_type);
  EXPECT_EQ(psk(set_value(psk_, "ciphertext", "0")), Error::json_wrong_type);
}

TEST_F(SimdCodec, BadInteger) {
  // Anything that starts like a number is judged as an integer, even where it is not JSON ("0x1",
  // "7:8", '7"x"': jsmn's strict mode runs a primitive up to whitespace, ',', ']' or '}').
  for (const char* raw : {"00", "01", "-1", "-0", "1.0", "1e3", "1E3", "0x1", "1a", "-", "7:8",
                          "7\"x\"", "123456789012345678901234"}) {
    EXPECT_EQ(data(set_value(data_, "seq", raw)), Error::bad_integer) << raw;
    EXPECT_EQ(psk(set_value(psk_, "sendts_ms", raw)), Error::bad_integer) << raw;
  }
}

TEST_F(SimdCodec, BadBase64) {
  for (const char* text :
       {"wMHCw8TFxsfIycr", "wMHCw8TFxsfIycrLA", "-MHCw8TFxsfIycrL", " MHCw8TFxsfIycrL",
        "wMHCw8TFxsfI====", "wM\\/Cw8TFxsfIycrL", "\\u0041MHCw8TFxsfIycrL"}) {
    EXPECT_EQ(data(set_string(data_, "iv", text)), Error::bad_base64) << text;
  }
  EXPECT_EQ(data(set_string(data_, "ciphertext", "AAB=")), Error::bad_base64);
  EXPECT_EQ(data(set_string(data_, "ciphertext", "AA")), Error::bad_base64);
  EXPECT_EQ(data(set_string(data_, "tag", "0NHS09TV1tfY2drb3N3e3x==")), Error::bad_base64);
  EXPECT_EQ(psk(set_string(psk_, "ciphertext", "AA==AA==")), Error::bad_base64);
}

TEST_F(SimdCodec, BadFieldLength) {
  for (const std::size_t n : {0U, 11U, 13U, 15U, 16U, 100U}) {
    EXPECT_EQ(data(set_string(data_, "iv", b64_zeros(n))), Error::bad_field_length) << n;
  }
  for (const std::size_t n : {0U, 12U, 15U, 17U}) {
    EXPECT_EQ(psk(set_string(psk_, "tag", b64_zeros(n))), Error::bad_field_length) << n;
  }
}

TEST_F(SimdCodec, BadDevId) {
  expect_fast_data(set_string(data_, "dev_id", "a"));
  expect_fast_data(set_string(data_, "dev_id", std::string(64, 'd')));
  for (const std::string& id :
       {std::string(""), std::string(65, 'd'), std::string("esp/32"), std::string("esp 32"),
        std::string("esp32\\u002d01"), std::string("esp32\\/01"), std::string("esp32\\\\01"),
        std::string("\xc3\xa9sp32"),  // valid UTF-8, outside the alphabet
        std::string("\xc3sp32"),      // invalid UTF-8 (simdjson's stage 1 rejects it)
        std::string("\xff\xfe"),      // invalid UTF-8
        std::string("esp\x01"),       // raw control character (not valid JSON)
        std::string("esp\x7f")}) {
    EXPECT_EQ(data(set_string(data_, "dev_id", id)), Error::bad_dev_id) << id;
  }
}

TEST_F(SimdCodec, TokensSimdjsonSplitsDifferentlyFromJsmn) {
  // jsmn (strict) runs a primitive up to whitespace, ',' or '}', so "7:8" is one primitive and
  // a bad integer; simdjson sees three tokens. Raw bytes simdjson does not treat as whitespace
  // start a token of their own. Whatever the fast path sees, the verdict is the portable one.
  EXPECT_EQ(data(set_value(data_, "seq", "7 8")), Error::json_syntax);
  EXPECT_EQ(data(set_value(data_, "seq", "7\v")), Error::json_syntax);  // control char
  EXPECT_EQ(data(set_value(data_, "seq", "+1")), Error::json_syntax);   // a word, not a number
  EXPECT_EQ(data(set_value(data_, "seq", "7\"x\"")), Error::bad_integer);
  EXPECT_EQ(data(set_value(data_, "dev_id", "\"esp32-01\"x")), Error::json_syntax);
  EXPECT_EQ(data(std::string(data_).insert(1, "\f")), Error::json_syntax);
  EXPECT_EQ(data(std::string(data_).insert(1, "\xc2\xa0")), Error::json_syntax);
}

}  // namespace
}  // namespace dsekp
