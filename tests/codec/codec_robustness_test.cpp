// Robustness of the decoders against damaged input: every single-byte deletion of a JSON frame,
// and a seeded random mutation run over all decoders. A decoder may reject anything; what it must
// never do is crash, or accept bytes that do not round-trip to the same values.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "codec_test_support.hpp"

namespace dsekp {
namespace {

using test::Bytes;

// Deleting one byte of a canonical JSON frame either breaks it or changes what it says (a digit of
// a number, a character of dev_id); it can never decode to the original frame.
template <typename Frame>
void expect_every_deletion_changes_or_fails(const Frame& original) {
  const Bytes wire = test::encode_to_bytes(original, Encoding::json);
  Frame reference;
  ASSERT_EQ(test::decode_frame(wire, reference), Error::ok);
  std::size_t accepted = 0;
  for (std::size_t i = 0; i < wire.size(); ++i) {
    Bytes damaged = wire;
    damaged.erase(damaged.begin() + static_cast<std::ptrdiff_t>(i));
    Frame f;
    if (test::decode_frame(damaged, f) == Error::ok) {
      ++accepted;
      EXPECT_FALSE(f == reference) << "deleting byte " << i << " changed nothing";
    }
  }
  // Sanity: deletions inside numbers and dev_id do yield other valid frames.
  EXPECT_GT(accepted, 0U);
}

TEST(JsonDeletion, Init) {
  expect_every_deletion_changes_or_fails(test::sample_init());
}
TEST(JsonDeletion, Ack) {
  expect_every_deletion_changes_or_fails(test::sample_ack());
}
TEST(JsonDeletion, Data) {
  expect_every_deletion_changes_or_fails(test::sample_data(Direction::uplink, 19));
}
TEST(JsonDeletion, Psk) {
  expect_every_deletion_changes_or_fails(test::sample_psk(19));
}

// ---- Random mutation. ----

// Bytes that matter to one of the two grammars, so mutations often hit interesting states.
constexpr char kInteresting[] = "{}[]\":,\\ \t\n0129-+.eE=AZaz/_tfnu\x01\x02\x03\x04\x05\x7f";

Bytes mutate(Bytes b, std::mt19937& rng) {
  const auto pick = [&](std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
  };
  const std::size_t edits = 1 + pick(4);
  for (std::size_t e = 0; e < edits; ++e) {
    const auto byte = [&]() -> std::uint8_t {
      return pick(2) == 0 ? static_cast<std::uint8_t>(kInteresting[pick(sizeof kInteresting - 1)])
                          : static_cast<std::uint8_t>(pick(256));
    };
    const std::size_t at = b.empty() ? 0 : pick(b.size() + 1);
    switch (pick(5)) {
      case 0:  // overwrite
        if (at < b.size()) b[at] = byte();
        break;
      case 1:  // insert
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), byte());
        break;
      case 2:  // delete
        if (at < b.size()) b.erase(b.begin() + static_cast<std::ptrdiff_t>(at));
        break;
      case 3:  // truncate
        b.resize(at < b.size() ? at : b.size());
        break;
      default:  // duplicate a slice somewhere else
        if (!b.empty()) {
          const std::size_t from = pick(b.size());
          const std::size_t len = 1 + pick(std::min<std::size_t>(16, b.size() - from));
          const Bytes slice(b.begin() + static_cast<std::ptrdiff_t>(from),
                            b.begin() + static_cast<std::ptrdiff_t>(from + len));
          b.insert(b.begin() + static_cast<std::ptrdiff_t>(pick(b.size() + 1)), slice.begin(),
                   slice.end());
        }
        break;
    }
  }
  return b;
}

// If `wire` decodes as a Frame, its re-encoding in the same encoding must decode to the same
// values; a compact frame must even re-encode to the identical bytes (the layout has no freedom).
template <typename Frame>
std::size_t check_decoder(const Bytes& wire, Direction d = Direction::uplink) {
  Frame f;
  Error e;
  if constexpr (std::is_same_v<Frame, DataFrame>) {
    e = test::decode_frame(wire, f, d);
  } else {
    e = test::decode_frame(wire, f);
  }
  if (e != Error::ok) return 0;
  const Encoding enc = detect_encoding(wire);
  const Bytes again = test::encode_to_bytes(f, enc);
  Frame g;
  if constexpr (std::is_same_v<Frame, DataFrame>) {
    EXPECT_EQ(test::decode_frame(again, g, d), Error::ok);
  } else {
    EXPECT_EQ(test::decode_frame(again, g), Error::ok);
  }
  EXPECT_EQ(g, f);
  if (enc == Encoding::compact) {
    EXPECT_EQ(again, wire);
  }
  return 1;
}

TEST(Mutation, SeededRandomInputsNeverCrashAndAcceptedFramesRoundTrip) {
  std::mt19937 rng(20240611);  // fixed seed: failures reproduce
  std::vector<Bytes> seeds;
  for (const Encoding enc : {Encoding::json, Encoding::compact}) {
    seeds.push_back(test::encode_to_bytes(test::sample_init(), enc));
    seeds.push_back(test::encode_to_bytes(test::sample_ack(), enc));
    seeds.push_back(test::encode_to_bytes(test::sample_data(Direction::uplink, 19), enc));
    seeds.push_back(test::encode_to_bytes(test::sample_data(Direction::downlink, 0), enc));
    seeds.push_back(test::encode_to_bytes(test::sample_psk(19), enc));
  }
  constexpr int kIterations = 30000;
  std::size_t accepted = 0;
  for (int i = 0; i < kIterations; ++i) {
    Bytes input;
    if (i % 10 == 0) {
      // Pure noise, sometimes dressed as JSON.
      input.resize(std::uniform_int_distribution<std::size_t>(0, 96)(rng));
      for (auto& b : input) b = static_cast<std::uint8_t>(rng());
      if (!input.empty() && i % 20 == 0) input[0] = '{';
    } else {
      input = mutate(seeds[static_cast<std::size_t>(rng()) % seeds.size()], rng);
    }
    SCOPED_TRACE(testing::Message() << "iteration " << i);
    accepted += check_decoder<InitFrame>(input);
    accepted += check_decoder<AckFrame>(input);
    accepted += check_decoder<DataFrame>(input, Direction::uplink);
    accepted += check_decoder<DataFrame>(input, Direction::downlink);
    accepted += check_decoder<PskFrame>(input);
    if (HasFailure()) break;  // one reproducible failure is enough
  }
  // Mutations that only change values (digits, ciphertext bytes) keep frames valid, so a healthy
  // run accepts a fair number; zero would mean the run tested nothing but rejection.
  EXPECT_GT(accepted, 1000U);
  RecordProperty("accepted", static_cast<int>(accepted));
}

}  // namespace
}  // namespace dsekp
