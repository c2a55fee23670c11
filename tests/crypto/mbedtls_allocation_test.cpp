// When the mbedTLS backend allocates, counted. mbedTLS 2.28 as packaged by Debian is built
// without MBEDTLS_PLATFORM_MEMORY, so mbedtls_platform_set_calloc_free does not exist and
// mbedtls_calloc/mbedtls_free are plain calloc/free. This executable therefore links a static
// libmbedcrypto and the linker redirects every calloc/free reference of the statically linked code
// (the backend and mbedTLS) to the counting wrappers below (-Wl,--wrap=calloc,--wrap=free, on this
// executable only; see CMakeLists.txt). The first test proves the counter sees mbedTLS's calls.
//
// Expected (see mbedtls_crypto.hpp): allocation at construction and when an AES-GCM call uses
// another key than the one cached GCM context holds; none for HMAC, HKDF or AES-GCM under the
// cached key, so a device sealing frame after frame under its uplink key never allocates, and
// each downlink it opens costs one re-key in and one back.
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "crypto/mbedtls/mbedtls_crypto.hpp"

namespace {
long g_callocs = 0;
long g_frees = 0;
}  // namespace

// The real allocator functions and the wrappers the linker substitutes for calloc and free.
extern "C" {
void* __real_calloc(std::size_t count, std::size_t size);
void __real_free(void* p);
void* __wrap_calloc(std::size_t count, std::size_t size) {
  ++g_callocs;
  return __real_calloc(count, size);
}
void __wrap_free(void* p) {
  if (p != nullptr) ++g_frees;
  __real_free(p);
}
}

namespace dsekp::test {
namespace {

struct Counts {
  long callocs, frees;
};

// Allocations made while running `fn`.
template <typename Fn>
Counts count(Fn&& fn) {
  const long callocs = g_callocs, frees = g_frees;
  fn();
  return {g_callocs - callocs, g_frees - frees};
}

class MbedtlsAllocation : public ::testing::Test {
 protected:
  void SetUp() override {
    construction_ = count([&] { crypto_.emplace(); });
    ASSERT_TRUE(crypto_->ready());
  }
  MbedtlsCrypto& crypto() { return *crypto_; }

  // Seals under key_[k] (even steps) or opens a message sealed under key_[k] (odd steps).
  void use_key(std::size_t k, std::size_t step) {
    AeadTag tag;
    if (step % 2 == 0) {
      ASSERT_EQ(crypto().aes128_gcm_seal(keys_[k], nonce_, aad_, plaintext_, ciphertext_, tag),
                Error::ok);
    } else {
      ASSERT_EQ(crypto().aes128_gcm_open(keys_[k], nonce_, aad_, sealed_[k], tags_[k], ciphertext_),
                Error::ok);
    }
  }
  // Seals one message per key with a separate backend, for use_key's opens. Allocates (counted
  // only if called inside count()).
  void prepare_messages() {
    MbedtlsCrypto other;
    for (std::size_t k = 0; k < keys_.size(); ++k) {
      ASSERT_EQ(other.aes128_gcm_seal(keys_[k], nonce_, aad_, plaintext_, sealed_[k], tags_[k]),
                Error::ok);
    }
  }

  std::optional<MbedtlsCrypto> crypto_;
  Counts construction_{};
  const std::array<std::array<std::uint8_t, kAeadKeySize>, 3> keys_ = {
      {{0x01, 0x02}, {0x03, 0x04}, {0x05, 0x06}}};
  const AeadNonce nonce_{};
  const std::array<std::uint8_t, 13> aad_{};
  const std::array<std::uint8_t, 19> plaintext_{'{', '"', 't', '"', ':', '2', '4', '}'};
  std::array<std::uint8_t, 19> ciphertext_{};
  std::array<std::array<std::uint8_t, 19>, 3> sealed_{};
  std::array<AeadTag, 3> tags_{};
};

// The counter sees mbedTLS's own allocations: mbedtls_md_setup allocates the SHA-256 context and
// ipad||opad. If the wrapping did not reach mbedTLS, every "== 0" below would pass vacuously.
TEST_F(MbedtlsAllocation, CounterSeesTheConstructorsAllocations) {
  EXPECT_EQ(construction_.callocs, 2);
  EXPECT_EQ(construction_.frees, 0);
  Counts destruction = count([&] { crypto_.reset(); });
  EXPECT_EQ(destruction.callocs, 0);
  EXPECT_EQ(destruction.frees, 2);
}

// The device's steady state: frame after frame under the uplink key.
TEST_F(MbedtlsAllocation, RunsUnderOneKeyNeverAllocate) {
  prepare_messages();
  // Warm-up: the first use of a key keys the GCM context (one calloc).
  const Counts warm_up = count([&] { use_key(0, 0); });
  EXPECT_EQ(warm_up.callocs, 1);
  EXPECT_EQ(warm_up.frees, 0);
  const Counts steady = count([&] {
    for (std::size_t step = 0; step < 100; ++step) use_key(0, step);
  });
  EXPECT_EQ(steady.callocs, 0);
  EXPECT_EQ(steady.frees, 0);
}

// Every change of key re-keys the one context: the old AES context is freed and a new one
// allocated, so nothing accumulates. (This also shows the counter works for GCM.)
TEST_F(MbedtlsAllocation, EveryKeyChangeFreesOneContextAndAllocatesOne) {
  prepare_messages();
  use_key(0, 0);
  const Counts alternating = count([&] {
    for (std::size_t step = 0; step < 100; ++step) use_key((step + 1) % 2, step);
  });
  EXPECT_EQ(alternating.callocs, 100);
  EXPECT_EQ(alternating.frees, 100);
  // In runs of seven under one key, only the first of each run re-keys.
  const Counts runs = count([&] {
    for (std::size_t step = 0; step < 98; ++step) use_key((step / 7 + 1) % 2, step);
  });
  EXPECT_EQ(runs.callocs, 14);
  EXPECT_EQ(runs.frees, 14);
}

TEST_F(MbedtlsAllocation, HmacAndHkdfNeverAllocate) {
  const std::array<std::uint8_t, 32> key{1, 2, 3};
  const std::array<std::uint8_t, 100> long_key{4, 5, 6};  // longer than a block: hashed first
  const std::array<std::uint8_t, 40> msg{7};
  const ByteView parts[] = {msg, msg};
  const Counts counts = count([&] {
    for (int i = 0; i < 50; ++i) {
      Sha256Digest mac;
      ASSERT_EQ(crypto().hmac_sha256(key, parts, mac), Error::ok);
      ASSERT_EQ(crypto().hmac_sha256(long_key, parts, mac), Error::ok);
      std::array<std::uint8_t, kHashSize> prk{};
      ASSERT_EQ(crypto().hkdf_extract({}, parts, prk), Error::ok);
      std::array<std::uint8_t, 100> okm{};
      ASSERT_EQ(crypto().hkdf_expand(prk, parts, okm), Error::ok);
    }
  });
  EXPECT_EQ(counts.callocs, 0);
  EXPECT_EQ(counts.frees, 0);
}

// forget_keys() only frees (the AES context); the first use of a key afterwards keys the context
// again (one calloc), and then a run under that key is allocation-free again.
TEST_F(MbedtlsAllocation, ForgetKeysFreesAndTheNextKeyAllocatesOnce) {
  prepare_messages();
  use_key(0, 0);
  use_key(1, 1);
  const Counts forget = count([&] { crypto().forget_keys(); });
  EXPECT_EQ(forget.callocs, 0);
  EXPECT_EQ(forget.frees, 1);
  const Counts again = count([&] { use_key(1, 0); });
  EXPECT_EQ(again.callocs, 1);
  EXPECT_EQ(again.frees, 0);  // the context was already freed by forget_keys()
  const Counts steady = count([&] {
    for (std::size_t step = 0; step < 100; ++step) use_key(1, step);
  });
  EXPECT_EQ(steady.callocs, 0);
  EXPECT_EQ(steady.frees, 0);
  // forget_keys() with nothing keyed frees nothing.
  crypto().forget_keys();
  EXPECT_EQ(count([&] { crypto().forget_keys(); }).frees, 0);
}

}  // namespace
}  // namespace dsekp::test
