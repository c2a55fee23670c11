// Differential test: SimdJsonDecoder against the portable decoder, which is its contract
// (codec_simdjson/simd_codec.hpp). For a large, bounded, seeded set of inputs both decoders must
// agree on ok vs error, on every decoded value when ok, and on the error name when both fail (the
// header documents no name differences, so the allowed count is zero). Every input the portable
// decoder accepts must also have been accepted by the fast path, not by the fallback: that is the
// performance half of the contract.
//
// Inputs: valid frames from the portable encoder with random values (canonical, and with members
// shuffled and whitespace added); every single-byte overwrite, deletion and insertion and every
// truncation of valid frames; seeded random bytes; generated JSON-like text that is mostly almost
// a frame; random multi-edit mutations. Each input goes to decode_data (uplink) and decode_psk.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "base64.hpp"
#include "codec_simdjson/simd_codec.hpp"
#include "codec_test_support.hpp"

namespace dsekp {
namespace {

using test::Bytes;
using Rng = std::mt19937_64;

constexpr std::uint64_t kMaxSendTs = (std::uint64_t{1} << 53) - 1;
constexpr std::string_view kDevIdChars =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-";
constexpr std::string_view kJsonWs = " \t\n\r";

std::size_t pick(Rng& rng, std::size_t n) {
  return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
}
bool chance(Rng& rng, double p) {
  return std::bernoulli_distribution(p)(rng);
}

std::string printable(const Bytes& b) {
  std::string out;
  for (const std::uint8_t c : b) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

// ---- The comparison and its statistics. ----

class Differential {
 public:
  void check(const Bytes& input) {
    ++inputs_;
    check_data(input, Direction::uplink);
    check_psk(input);
  }
  void check_data(const Bytes& input, Direction d) {
    DataFrame expected;
    const Error portable = decode_data(input, d, expected);
    const std::uint64_t fast_before = decoder_.stats().fast_accepts;
    const Error simd = decoder_.decode_data(input, d, data_out_);
    const bool fast = decoder_.stats().fast_accepts != fast_before;
    record(input, "data", portable, simd, fast, portable != Error::ok || data_out_ == expected);
  }
  void check_psk(const Bytes& input) {
    PskFrame expected;
    const Error portable = decode_psk(input, expected);
    const std::uint64_t fast_before = decoder_.stats().fast_accepts;
    const Error simd = decoder_.decode_psk(input, psk_out_);
    const bool fast = decoder_.stats().fast_accepts != fast_before;
    record(input, "psk", portable, simd, fast, portable != Error::ok || psk_out_ == expected);
  }

  // Prints the statistics and asserts the contract: no disagreement of any kind.
  void report(const char* category, std::chrono::steady_clock::duration took) const {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(took).count();
    std::printf(
        "[%s] %zu inputs, %zu decodes (%lld ms): %zu agree ok, %zu agree on the error, "
        "%zu verdict mismatches, %zu value mismatches, %zu error-name differences, "
        "%zu valid frames missed by the fast path\n",
        category, inputs_, decodes_, static_cast<long long>(ms), agree_ok_, agree_error_,
        verdict_mismatches_, value_mismatches_, name_differences_total(), ok_not_fast_);
    std::string errors;
    for (const auto& [name, n] : errors_) errors += " " + name + "=" + std::to_string(n);
    std::printf("[%s] errors seen:%s\n", category, errors.c_str());
    for (const auto& [kind, n] : name_differences_) {
      std::printf("[%s] error-name difference %s: %zu\n", category, kind.c_str(), n);
    }
    EXPECT_EQ(verdict_mismatches_, 0U);
    EXPECT_EQ(value_mismatches_, 0U);
    // simd_codec.hpp documents no error-name differences.
    EXPECT_EQ(name_differences_total(), 0U);
    EXPECT_EQ(ok_not_fast_, 0U);
    EXPECT_EQ(agree_ok_ + agree_error_, decodes_);
  }

  [[nodiscard]] std::size_t agree_ok() const { return agree_ok_; }

 private:
  void record(const Bytes& input, const char* decoder, Error portable, Error simd, bool fast,
              bool same_values) {
    ++decodes_;
    const bool portable_ok = portable == Error::ok;
    const bool simd_ok = simd == Error::ok;
    const char* problem = nullptr;
    if (portable_ok != simd_ok) {
      ++verdict_mismatches_;
      problem = "verdict";
    } else if (portable_ok) {
      if (!same_values) {
        ++value_mismatches_;
        problem = "values";
      } else {
        ++agree_ok_;
      }
      if (!fast) ++ok_not_fast_;
    } else {
      ++errors_[error_name(portable)];
      if (portable != simd) {
        ++name_differences_[std::string(error_name(portable)) + "->" + error_name(simd)];
        problem = "error name";
      } else {
        ++agree_error_;
      }
    }
    if (portable_ok && !fast && problem == nullptr) problem = "fast path missed a valid frame";
    if (problem != nullptr && ++reported_ <= 5) {
      ADD_FAILURE() << decoder << ": " << problem << " portable=" << error_name(portable)
                    << " simd=" << error_name(simd) << " input=\"" << printable(input) << '"';
    }
  }

  std::size_t name_differences_total() const {
    std::size_t n = 0;
    for (const auto& [kind, count] : name_differences_) n += count;
    return n;
  }

  SimdJsonDecoder decoder_;
  // Reused across inputs, as an edge reuses its frame buffers: stale values must never leak.
  DataFrame data_out_;
  PskFrame psk_out_;
  std::size_t inputs_ = 0, decodes_ = 0, agree_ok_ = 0, agree_error_ = 0;
  std::size_t verdict_mismatches_ = 0, value_mismatches_ = 0, ok_not_fast_ = 0, reported_ = 0;
  std::map<std::string, std::size_t> errors_;
  std::map<std::string, std::size_t> name_differences_;
};

// Runs `body(Differential&)` and reports under `category`.
template <typename Body>
void run(const char* category, Body&& body) {
  Differential diff;
  const auto start = std::chrono::steady_clock::now();
  body(diff);
  diff.report(category, std::chrono::steady_clock::now() - start);
}

// ---- Random valid frames. ----

std::uint64_t random_uint(Rng& rng, std::uint64_t max) {
  switch (pick(rng, 6)) {
    case 0:
      return 0;
    case 1:
      return max;
    case 2:
      return max - pick(rng, 10);
    case 3:
      return pick(rng, 1000);
    default:
      return std::uniform_int_distribution<std::uint64_t>(0, max)(rng);
  }
}

DevId random_dev_id(Rng& rng) {
  const std::size_t n = chance(rng, 0.3) ? 8 : 1 + pick(rng, kDevIdMaxSize);
  std::string s(n, 'x');
  for (char& c : s) c = kDevIdChars[pick(rng, kDevIdChars.size())];
  DevId id;
  EXPECT_EQ(id.assign(s), Error::ok);
  return id;
}

template <typename Fixed>
Fixed random_fixed(Rng& rng) {
  Fixed f;
  for (std::size_t i = 0; i < Fixed::size(); ++i) f.data()[i] = static_cast<std::uint8_t>(rng());
  return f;
}

Bytes random_bytes(Rng& rng, std::size_t n) {
  Bytes b(n);
  for (auto& c : b) c = static_cast<std::uint8_t>(rng());
  return b;
}

std::size_t random_payload_size(Rng& rng) {
  if (chance(rng, 0.05)) return kMaxPayloadSize - pick(rng, 3);
  if (chance(rng, 0.1)) return pick(rng, kMaxPayloadSize + 1);
  return pick(rng, 64);
}

DataFrame random_data(Rng& rng) {
  DataFrame f;
  f.direction = Direction::uplink;
  f.dev_id = random_dev_id(rng);
  f.sessctr = static_cast<std::uint16_t>(random_uint(rng, UINT16_MAX));
  f.seq = static_cast<std::uint32_t>(random_uint(rng, UINT32_MAX));
  f.sendts_ms = random_uint(rng, kMaxSendTs);
  f.has_iv = true;
  f.iv = random_fixed<AeadNonce>(rng);
  EXPECT_TRUE(f.ciphertext.assign(random_bytes(rng, random_payload_size(rng))));
  f.tag = random_fixed<AeadTag>(rng);
  return f;
}

PskFrame random_psk(Rng& rng) {
  PskFrame f;
  f.dev_id = random_dev_id(rng);
  f.seq = static_cast<std::uint32_t>(random_uint(rng, UINT32_MAX));
  f.sendts_ms = random_uint(rng, kMaxSendTs);
  f.iv = random_fixed<AeadNonce>(rng);
  EXPECT_TRUE(f.ciphertext.assign(random_bytes(rng, random_payload_size(rng))));
  f.tag = random_fixed<AeadTag>(rng);
  return f;
}

std::string random_ws(Rng& rng, double p) {
  std::string s;
  while (chance(rng, p)) s += kJsonWs[pick(rng, kJsonWs.size())];
  return s;
}

// The same frame with its members shuffled and JSON whitespace between all tokens. Canonical
// values contain no ',' or ':', so splitting on them is exact.
Bytes relayout(const Bytes& canonical, Rng& rng) {
  const std::string text = test::as_string(canonical);
  std::vector<std::string> members;
  std::size_t start = 1;
  for (std::size_t i = 1; i < text.size(); ++i) {
    if (text[i] == ',' || i == text.size() - 1) {
      members.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  std::shuffle(members.begin(), members.end(), rng);
  std::string out = "{";
  for (std::size_t m = 0; m < members.size(); ++m) {
    const std::size_t colon = members[m].find(':');
    out += random_ws(rng, 0.3) + members[m].substr(0, colon) + random_ws(rng, 0.3) + ':' +
           random_ws(rng, 0.3) + members[m].substr(colon + 1) + random_ws(rng, 0.3);
    out += m + 1 < members.size() ? "," : "}";
  }
  return test::as_bytes(out + random_ws(rng, 0.3));
}

TEST(Differential, RandomValidFramesAgreeAndTakeTheFastPath) {
  run("valid frames", [](Differential& diff) {
    Rng rng(1);
    for (int i = 0; i < 3000; ++i) {
      const Bytes data = test::encode_to_bytes(random_data(rng), Encoding::json);
      const Bytes psk = test::encode_to_bytes(random_psk(rng), Encoding::json);
      // (With a long dev_id, a full payload and whitespace, a relaid-out frame can exceed
      // kMaxFrameSize: both must then say frame_too_large.)
      for (const Bytes& b : {data, relayout(data, rng), psk, relayout(psk, rng)}) diff.check(b);
      diff.check_data(data, Direction::downlink);
    }
    EXPECT_GE(diff.agree_ok(), 12000U);
  });
}

// ---- Every single-byte edit and truncation of valid frames. ----

void every_single_byte_edit(Differential& diff, const Bytes& frame,
                            const std::vector<std::uint8_t>& bytes) {
  for (std::size_t at = 0; at <= frame.size(); ++at) {
    if (at < frame.size()) {
      Bytes deleted = frame;
      deleted.erase(deleted.begin() + static_cast<std::ptrdiff_t>(at));
      diff.check(deleted);
      diff.check(Bytes(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(at)));
    }
    for (const std::uint8_t b : bytes) {
      if (at < frame.size() && b != frame[at]) {
        Bytes overwritten = frame;
        overwritten[at] = b;
        diff.check(overwritten);
      }
      Bytes inserted = frame;
      inserted.insert(inserted.begin() + static_cast<std::ptrdiff_t>(at), b);
      diff.check(inserted);
    }
  }
}

std::vector<std::uint8_t> all_bytes() {
  std::vector<std::uint8_t> v(256);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint8_t>(i);
  return v;
}

TEST(Differential, EverySingleByteEditOfValidFramesAgrees) {
  run("single-byte edits", [](Differential& diff) {
    every_single_byte_edit(
        diff, test::encode_to_bytes(test::sample_data(Direction::uplink, 19), Encoding::json),
        all_bytes());
    every_single_byte_edit(diff, test::encode_to_bytes(test::sample_psk(19), Encoding::json),
                           all_bytes());
    // A relaid-out frame, with the bytes that matter to either grammar.
    Rng rng(2);
    const std::string some = "{}[]\":,\\ \t\n\r0129-+.eE=AQZaz/_tfnu\x01\x0b\x0c\x7f\x80\xc3\xff";
    const std::vector<std::uint8_t> interesting(some.begin(), some.end());
    every_single_byte_edit(
        diff,
        relayout(test::encode_to_bytes(test::sample_data(Direction::uplink, 19), Encoding::json),
                 rng),
        interesting);
  });
}

// Found by fuzz_simdjson_diff (docs/RELIABILITY.md, Findings 1): a string value followed by `:`
// was skipped by simdjson as if it were a key, so the fast decoder accepted what the portable one
// refuses as trailing_bytes.
TEST(Differential, StringValueFollowedByAColonAgrees) {
  run("fuzzer reproducers", [](Differential& diff) {
    for (
        const std::string text : {
            R"({"seq":95,"dev_id":"s":},"sessctr_id":1,"ciphertext":"","iv":"9PX29/D5+vv8/f7/","tag":"MDEyMzQ1Njc4OTo7PD0+Pw==","sendts_ms":9})",
            R"({"seq":95,"dev_id":"s":},"ciphertext":"","iv":"9PX29/D5+vv8/f7/","tag":"MDEyMzQ1Njc4OTo7PD0+Pw==","sendts_ms":9})",
            R"({"seq":95,"dev_id":"s":1},"ciphertext":"","iv":"9PX29/D5+vv8/f7/","tag":"MDEyMzQ1Njc4OTo7PD0+Pw==","sendts_ms":9})",
        }) {
      diff.check(Bytes(text.begin(), text.end()));
    }
  });
}

// ---- Garbage. ----

TEST(Differential, SeededRandomBytesAgree) {
  run("random bytes", [](Differential& diff) {
    Rng rng(3);
    for (int i = 0; i < 20000; ++i) {
      Bytes b = random_bytes(rng, pick(rng, 200));
      if (!b.empty() && i % 2 == 0) b[0] = '{';
      if (b.size() > 1 && i % 4 == 0) b.back() = '}';
      diff.check(b);
    }
  });
}

// Generated text that is mostly almost a DATA or PSK frame: real member names in any order with
// mostly good values, then damaged in one of many ways that matter to one of the two parsers.
class JsonishGenerator {
 public:
  explicit JsonishGenerator(std::uint64_t seed) : rng_(seed) {}

  Bytes next() {
    const bool psk = chance(rng_, 0.3);
    std::vector<std::string> names =
        psk ? std::vector<std::string>{"seq", "dev_id", "ciphertext", "iv", "tag", "sendts_ms"}
            : std::vector<std::string>{"seq", "dev_id", "sessctr_id", "ciphertext",
                                       "iv",  "tag",    "sendts_ms"};
    std::shuffle(names.begin(), names.end(), rng_);
    if (chance(rng_, 0.2))
      names.erase(names.begin() + static_cast<std::ptrdiff_t>(pick(rng_, names.size())));
    if (chance(rng_, 0.2)) names.push_back(random_name());
    if (chance(rng_, 0.1)) names.push_back(names[pick(rng_, names.size())]);
    const double good = chance(rng_, 0.5) ? 1.0 : 0.85;
    std::string out = "{" + ws();
    for (std::size_t m = 0; m < names.size(); ++m) {
      out += key(names[m]) + ws() + sep(':') + ws();
      out += chance(rng_, good) ? good_value(names[m]) : random_value();
      out += ws();
      if (m + 1 < names.size()) out += sep(',') + ws();
    }
    out += chance(rng_, 0.98) ? "}" : random_value();
    if (chance(rng_, 0.1)) out += chance(rng_, 0.5) ? ws() : random_value();
    return test::as_bytes(out);
  }

 private:
  std::string ws() {
    if (chance(rng_, 0.85)) return "";
    if (chance(rng_, 0.05)) {
      const std::string odd[] = {"\v", "\f", std::string(1, '\0'), "\xc2\xa0", "\x01"};
      return odd[pick(rng_, std::size(odd))];
    }
    return random_ws(rng_, 0.6) + std::string(1, kJsonWs[pick(rng_, kJsonWs.size())]);
  }
  std::string sep(char c) {
    if (chance(rng_, 0.97)) return std::string(1, c);
    const std::string bad[] = {"", std::string(2, c), ";", c == ':' ? "," : ":", "="};
    return bad[pick(rng_, std::size(bad))];
  }
  std::string key(const std::string& name) {
    if (chance(rng_, 0.97)) return '"' + name + '"';
    const std::string bad[] = {name, "'" + name + "'", '"' + name, '"' + name + "\\\"\""};
    return bad[pick(rng_, std::size(bad))];
  }
  std::string random_name() {
    const std::string names[] = {"v",       "Seq",   "seq ",           "se\\u0071", "",
                                 "sessctr", "iv\\n", "ciphertext\xc3", "dev-id",    "x"};
    return names[pick(rng_, std::size(names))];
  }
  std::string b64(std::size_t n) {
    const Bytes raw = random_bytes(rng_, n);
    std::string text(base64::encoded_size(n), '?');
    std::size_t written = 0;
    EXPECT_EQ(base64::encode(raw, std::span<char>(text.data(), text.size()), written), Error::ok);
    return text;
  }
  std::string good_value(const std::string& name) {
    if (name == "seq") return std::to_string(random_uint(rng_, UINT32_MAX));
    if (name == "sessctr_id") return std::to_string(random_uint(rng_, UINT16_MAX));
    if (name == "sendts_ms") return std::to_string(random_uint(rng_, kMaxSendTs));
    if (name == "dev_id") return '"' + std::string(random_dev_id(rng_).str()) + '"';
    if (name == "iv") return '"' + b64(12) + '"';
    if (name == "tag") return '"' + b64(16) + '"';
    if (name == "ciphertext") return '"' + b64(pick(rng_, 40)) + '"';
    return random_value();
  }
  std::string random_value() {
    // Values that are right for some member and wrong for others, or wrong for every member in
    // a way one of the two parsers might see differently.
    // clang-format off
    static const std::string kValues[] = {
        "0", "4294967295", "4294967296", "65535", "65536", "9007199254740991",
        "9007199254740992", "18446744073709551616", "00", "01", "-1", "-0", "1.0", "1e3", "0x1",
        "1a", "-", "7:8", "true", "false", "null", "nul", "[]", "[1,2]", "{}", "{\"a\":1}",
        "\"\"", "\"7\"", "\"esp32-01\"", "\"AA==\"", "\"AAB=\"", "\"AA\"", "\"AA== \"",
        "\"wMHCw8TFxsfIycrL\"", "\"0NHS09TV1tfY2drb3N3e3w==\"", "\"esp\\u002d\"", "\"a\\\"b\"",
        "\"\\x\"", "\"\xc3\xa9\"", "\"\xc3\"", "\"a\x01\"", "\"abc", "'a'",
        "[1,2,3,4,5,6,7,8,9,10,11,12]",
    };
    // clang-format on
    switch (pick(rng_, 8)) {
      case 0:
        return '"' + b64(pick(rng_, 20)) + '"';
      case 1:
        return std::to_string(rng_());
      default:
        return kValues[pick(rng_, std::size(kValues))];
    }
  }

  Rng rng_;
};

TEST(Differential, GeneratedJsonLikeTextAgrees) {
  run("JSON-like text", [](Differential& diff) {
    JsonishGenerator gen(4);
    for (int i = 0; i < 80000; ++i) diff.check(gen.next());
    EXPECT_GT(diff.agree_ok(), 2000U);  // a fair share is valid: acceptance is exercised too
  });
}

// ---- Random multi-edit mutations of valid frames. ----

Bytes mutate(Bytes b, Rng& rng) {
  constexpr std::string_view kInteresting = "{}[]\":,\\ \t\n0129-+.eE=AZaz/_tfnu\x01\x7f\xc3";
  for (std::size_t edits = 1 + pick(rng, 4); edits > 0; --edits) {
    const std::uint8_t byte =
        chance(rng, 0.5) ? static_cast<std::uint8_t>(kInteresting[pick(rng, kInteresting.size())])
                         : static_cast<std::uint8_t>(rng());
    const std::size_t at = pick(rng, b.size() + 1);
    switch (pick(rng, 5)) {
      case 0:
        if (at < b.size()) b[at] = byte;
        break;
      case 1:
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), byte);
        break;
      case 2:
        if (at < b.size()) b.erase(b.begin() + static_cast<std::ptrdiff_t>(at));
        break;
      case 3:
        b.resize(std::min(at, b.size()));
        break;
      default:  // duplicate a slice somewhere else
        if (!b.empty()) {
          const std::size_t from = pick(rng, b.size());
          const std::size_t len = 1 + pick(rng, std::min<std::size_t>(16, b.size() - from));
          const Bytes slice(b.begin() + static_cast<std::ptrdiff_t>(from),
                            b.begin() + static_cast<std::ptrdiff_t>(from + len));
          b.insert(b.begin() + static_cast<std::ptrdiff_t>(pick(rng, b.size() + 1)), slice.begin(),
                   slice.end());
        }
        break;
    }
  }
  return b;
}

TEST(Differential, RandomMultiEditMutationsAgree) {
  run("multi-edit mutations", [](Differential& diff) {
    Rng rng(5);
    for (int i = 0; i < 50000; ++i) {
      Bytes seed = i % 2 == 0 ? test::encode_to_bytes(random_data(rng), Encoding::json)
                              : test::encode_to_bytes(random_psk(rng), Encoding::json);
      if (i % 3 == 0) seed = relayout(seed, rng);
      diff.check(mutate(seed, rng));
    }
  });
}

}  // namespace
}  // namespace dsekp
