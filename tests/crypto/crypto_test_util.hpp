// Shared helpers of the crypto tests: the backend parameter (every suite runs against OpenSSL and
// mbedTLS), the owner of one backend, and hex and byte helpers.
//
// The suites are value-parameterised on a BackendKind rather than typed on the backend classes:
// GoogleTest's typed tests take typeid() of the type parameter, and the mbedTLS backend is built
// without RTTI (device flags), so its type_info does not exist to link against.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "crypto/mbedtls/mbedtls_crypto.hpp"
#include "crypto/openssl/openssl_crypto.hpp"
#include "dsekp/crypto.hpp"

namespace dsekp::test {

using Bytes = std::vector<std::uint8_t>;

enum class BackendKind { openssl, mbedtls };

inline const char* kind_name(BackendKind kind) {
  return kind == BackendKind::openssl ? "openssl" : "mbedtls";
}

// Lets GoogleTest print the parameter by name (it appears in test names and failure messages).
inline void PrintTo(BackendKind kind, std::ostream* os) {
  *os << kind_name(kind);
}

/// Owns one backend of a chosen kind. CryptoBackend's destructor is protected and non-virtual
/// (no deleting destructor on the device path), so backends are owned by their concrete type.
class AnyBackend {
 public:
  explicit AnyBackend(BackendKind kind) {
    if (kind == BackendKind::openssl) {
      openssl_.emplace();
    } else {
      mbedtls_.emplace();
    }
  }
  /// False if the library could not set the backend up.
  [[nodiscard]] bool ready() const { return openssl_ ? openssl_->ready() : mbedtls_->ready(); }
  CryptoBackend& get() {
    if (openssl_) return *openssl_;
    return *mbedtls_;
  }

 private:
  std::optional<OpenSslCrypto> openssl_;
  std::optional<MbedtlsCrypto> mbedtls_;
};

/// Lowercase or uppercase hex to bytes; an invalid string fails the current test.
inline Bytes hex(std::string_view text) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  Bytes out;
  if (text.size() % 2 != 0) {
    ADD_FAILURE() << "odd-length hex: " << text;
    return out;
  }
  for (std::size_t i = 0; i < text.size(); i += 2) {
    const int hi = nibble(text[i]);
    const int lo = nibble(text[i + 1]);
    if (hi < 0 || lo < 0) {
      ADD_FAILURE() << "bad hex: " << text;
      return {};
    }
    out.push_back(static_cast<std::uint8_t>(hi * 16 + lo));
  }
  return out;
}

inline std::string to_hex(ByteView bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (std::uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

inline Bytes to_bytes(ByteView view) {
  return Bytes(view.begin(), view.end());
}

inline bool all_zero(ByteView bytes) {
  for (std::uint8_t b : bytes) {
    if (b != 0) return false;
  }
  return true;
}

// Callers pass exactly 12 / 16 bytes (test vectors with other lengths are filtered out first).
inline AeadNonce nonce_of(const Bytes& bytes) {
  AeadNonce nonce;
  EXPECT_TRUE(nonce.assign(bytes)) << "nonce of " << bytes.size() << " bytes";
  return nonce;
}
inline AeadTag tag_of(const Bytes& bytes) {
  AeadTag tag;
  EXPECT_TRUE(tag.assign(bytes)) << "tag of " << bytes.size() << " bytes";
  return tag;
}

/// Fixture of a suite run once per backend. `crypto()` is a fresh backend for each test.
class BackendTest : public ::testing::TestWithParam<BackendKind> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(backend_.ready()) << "backend " << kind_name(GetParam()) << " is not ready";
  }
  CryptoBackend& crypto() { return backend_.get(); }

 private:
  AnyBackend backend_{GetParam()};
};

inline std::string backend_param_name(const ::testing::TestParamInfo<BackendKind>& info) {
  return kind_name(info.param);
}

}  // namespace dsekp::test

/// Instantiates a BackendTest-derived suite for both backends, named .../openssl and .../mbedtls.
#define DSEKP_INSTANTIATE_FOR_BOTH_BACKENDS(suite)                                                 \
  INSTANTIATE_TEST_SUITE_P(                                                                        \
      Backends, suite,                                                                             \
      ::testing::Values(::dsekp::test::BackendKind::openssl, ::dsekp::test::BackendKind::mbedtls), \
      ::dsekp::test::backend_param_name)
