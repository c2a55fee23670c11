// Tests of the small value types and helpers: DevId, EdgeSalt, constant_time_equal, secure_wipe
// and error_name.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "codec_test_support.hpp"
#include "dsekp/bytes.hpp"
#include "dsekp/spec.hpp"

namespace dsekp {
namespace {

TEST(DevId, AcceptsTheAlphabetAndBothLengthLimits) {
  DevId id;
  EXPECT_EQ(id.assign("a"), Error::ok);
  EXPECT_EQ(id.str(), "a");
  EXPECT_EQ(id.size(), 1U);
  const std::string all = "ABCXYZabcxyz0189._-";
  EXPECT_EQ(id.assign(all), Error::ok);
  EXPECT_EQ(id.str(), all);
  const std::string longest(64, 'z');
  EXPECT_EQ(id.assign(longest), Error::ok);
  EXPECT_EQ(id.str(), longest);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(id.view().data()), id.view().size()),
            longest);
}

TEST(DevId, RejectsEmptyTooLongAndForeignBytes) {
  DevId id;
  EXPECT_EQ(id.assign(""), Error::bad_dev_id);
  EXPECT_EQ(id.assign(std::string(65, 'a')), Error::bad_dev_id);
  for (const char c : std::string("/+# :\\\"{}\x7f\x80")) {
    EXPECT_EQ(id.assign(std::string("dev") + c), Error::bad_dev_id) << int(c);
    EXPECT_FALSE(is_valid_dev_id(std::string("dev") + c));
  }
  EXPECT_EQ(id.assign(std::string_view("ab\0c", 4)), Error::bad_dev_id);
  EXPECT_TRUE(is_valid_dev_id("esp32-01"));
  EXPECT_FALSE(is_valid_dev_id(""));
}

// Every byte value: the alphabet is exactly [A-Za-z0-9._-] (dev_ids appear in topic names,
// JSON strings and logs unescaped), wherever the byte sits.
TEST(DevId, AcceptsExactlyTheAlphabetForEveryByteValue) {
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    const bool expected = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                          (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    EXPECT_EQ(is_valid_dev_id(std::string(1, c)), expected) << b;
    EXPECT_EQ(is_valid_dev_id(std::string("ab") + c), expected) << b;
    EXPECT_EQ(is_valid_dev_id(std::string(63, 'x') + c), expected) << b;
  }
}

TEST(DevId, AShorterIdAssignedOverALongerOneIsTheShorterOne) {
  DevId id;
  ASSERT_EQ(id.assign(std::string(64, 'z')), Error::ok);
  ASSERT_EQ(id.assign("ab"), Error::ok);
  EXPECT_EQ(id.size(), 2u);
  EXPECT_EQ(id.str(), "ab");
  EXPECT_EQ(id.view().size(), 2u);
  DevId fresh;
  ASSERT_EQ(fresh.assign("ab"), Error::ok);
  EXPECT_TRUE(id == fresh);
}

TEST(DevId, FailedAssignKeepsTheOldValue) {
  DevId id;
  ASSERT_EQ(id.assign("esp32-01"), Error::ok);
  EXPECT_EQ(id.assign("bad/id"), Error::bad_dev_id);
  EXPECT_EQ(id.str(), "esp32-01");
  ASSERT_EQ(id.assign("x"), Error::ok);
  EXPECT_EQ(id, test::make_dev_id("x"));
  EXPECT_FALSE(id == test::make_dev_id("esp32-01"));
}

TEST(EdgeSalt, AcceptsSixteenToThirtyTwoBytes) {
  EdgeSalt salt;
  EXPECT_EQ(salt.assign(test::counting_bytes(15)), Error::invalid_argument);
  EXPECT_EQ(salt.assign(test::counting_bytes(33)), Error::invalid_argument);
  EXPECT_TRUE(salt.view().empty());
  ASSERT_EQ(salt.assign(test::counting_bytes(16, 1)), Error::ok);
  EXPECT_EQ(test::Bytes(salt.view().begin(), salt.view().end()), test::counting_bytes(16, 1));
  ASSERT_EQ(salt.assign(test::counting_bytes(32, 2)), Error::ok);
  EXPECT_EQ(test::Bytes(salt.view().begin(), salt.view().end()), test::counting_bytes(32, 2));
}

TEST(Bytes, ConstantTimeEqual) {
  EXPECT_TRUE(constant_time_equal(ByteView(), ByteView()));
  // Lengths around the 8-byte word size, and the sizes the protocol compares (12, 16, 32).
  for (const std::size_t n : {1u, 7u, 8u, 9u, 12u, 13u, 16u, 31u, 32u}) {
    const test::Bytes a = test::counting_bytes(n);
    EXPECT_TRUE(constant_time_equal(a, a)) << n;
    EXPECT_TRUE(constant_time_equal(a, test::Bytes(a))) << n;
    for (std::size_t i = 0; i < a.size(); ++i) {
      for (const int flip : {0x01, 0x80, 0xFF}) {
        test::Bytes b = a;
        b[i] = static_cast<std::uint8_t>(b[i] ^ flip);
        EXPECT_FALSE(constant_time_equal(a, b)) << n << " " << i;
      }
    }
    EXPECT_FALSE(constant_time_equal(a, ByteView(a).first(n - 1))) << n;
  }
}

TEST(Bytes, SecureWipeZeroesEveryByte) {
  test::Bytes b(100, 0xA5);
  secure_wipe(b);
  EXPECT_EQ(b, test::Bytes(100, 0));
  secure_wipe(MutableByteView());  // empty is fine
}

TEST(ErrorName, EveryErrorHasADistinctSnakeCaseName) {
  std::set<std::string> names;
  for (std::uint8_t i = 0; i < kErrorCount; ++i) {
    const char* name = error_name(static_cast<Error>(i));
    ASSERT_NE(name, nullptr);
    const std::string s(name);
    EXPECT_FALSE(s.empty());
    EXPECT_EQ(s.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_"), std::string::npos) << s;
    EXPECT_NE(s, "unknown_error") << int(i);
    names.insert(s);
  }
  EXPECT_EQ(names.size(), kErrorCount);
  EXPECT_STREQ(error_name(Error::ok), "ok");
  EXPECT_STREQ(error_name(Error::frame_empty), "frame_empty");
  EXPECT_STREQ(error_name(Error::json_duplicate_field), "json_duplicate_field");
  EXPECT_STREQ(error_name(Error::replay), "replay");
  EXPECT_STREQ(error_name(Error::crypto_failure), "crypto_failure");
  EXPECT_STREQ(error_name(static_cast<Error>(kErrorCount)), "unknown_error");
}

}  // namespace
}  // namespace dsekp
