// What the OpenSSL backend leaves in memory after forget_keys(). OpenSSL's contexts are opaque, so
// this executable routes every OpenSSL allocation through CRYPTO_set_mem_functions (before OpenSSL
// allocates anything: see main), keeps the list of live blocks, and searches them, and the
// backend object itself, for the key bytes. Before forget_keys() the searches must find the keys
// (so a search that cannot see them fails instead of passing); afterwards they must not.
//
// Where the bytes are before: the HMAC provider keeps a copy of the last HMAC key, and the SHA-256
// state of the last MAC is that MAC (as 32-bit words in host order); an AES key schedule starts
// with the key itself (AES-NI keeps it in byte order, the portable C code as words in host order);
// the backend keeps a copy of each cached AES key. AES implementations that store a transformed
// schedule (vpaes, without AES-NI) hide the key from a byte search: the AES part is then skipped.
#include <gtest/gtest.h>
#include <openssl/crypto.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "crypto/openssl/openssl_crypto.hpp"

namespace {

std::mutex g_mutex;
std::unordered_map<void*, std::size_t>* g_live = nullptr;  // OpenSSL's live blocks and sizes

void* tracked_malloc(std::size_t n, const char*, int) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p != nullptr) {
    const std::lock_guard<std::mutex> lock(g_mutex);
    (*g_live)[p] = n;
  }
  return p;
}

void tracked_free(void* p, const char*, int) {
  if (p == nullptr) return;
  {
    const std::lock_guard<std::mutex> lock(g_mutex);
    g_live->erase(p);
  }
  std::free(p);
}

void* tracked_realloc(void* p, std::size_t n, const char* file, int line) {
  if (p == nullptr) return tracked_malloc(n, file, line);
  const std::lock_guard<std::mutex> lock(g_mutex);
  void* q = std::realloc(p, n == 0 ? 1 : n);
  if (q != nullptr) {
    g_live->erase(p);
    (*g_live)[q] = n;
  }
  return q;
}

}  // namespace

namespace dsekp::test {
namespace {

using Bytes = std::vector<std::uint8_t>;

bool contains(ByteView haystack, ByteView needle) {
  return std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end()) !=
         haystack.end();
}

// `bytes` with every 4-byte group reversed: big-endian words as a little-endian host stores them.
Bytes words_swapped(ByteView bytes) {
  Bytes out(bytes.begin(), bytes.end());
  for (std::size_t i = 0; i + 4 <= out.size(); i += 4)
    std::reverse(out.begin() + i, out.begin() + i + 4);
  return out;
}

// True if `pattern`, or its word-swapped form, is in a live OpenSSL block or in the object.
bool anywhere(const OpenSslCrypto& crypto, ByteView pattern) {
  const Bytes swapped = words_swapped(pattern);
  const ByteView object(reinterpret_cast<const std::uint8_t*>(&crypto), sizeof(crypto));
  if (contains(object, pattern) || contains(object, swapped)) return true;
  const std::lock_guard<std::mutex> lock(g_mutex);
  for (const auto& [p, n] : *g_live) {
    const ByteView block(static_cast<const std::uint8_t*>(p), n);
    if (contains(block, pattern) || contains(block, swapped)) return true;
  }
  return false;
}

Bytes patterned(std::size_t n, std::uint8_t first) {
  Bytes out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint8_t>(first + 7 * i);
  return out;
}

TEST(OpenSslKeyResidue, HmacKeyAndLastMacAreGoneAfterForget) {
  OpenSslCrypto crypto;
  ASSERT_TRUE(crypto.ready());
  const Bytes key = patterned(kHashSize, 0xC1), msg = {'m', 's', 'g'};
  const ByteView parts[] = {msg};
  Sha256Digest mac;
  ASSERT_EQ(crypto.hmac_sha256(key, parts, mac), Error::ok);
  const ByteView mac_head = mac.view().first(16);
  ASSERT_TRUE(anywhere(crypto, key)) << "the search does not see OpenSSL's copy of the HMAC key";
  ASSERT_TRUE(anywhere(crypto, mac_head)) << "the search does not see the last MAC's hash state";

  crypto.forget_keys();
  EXPECT_FALSE(anywhere(crypto, ByteView(key).first(16)));
  EXPECT_FALSE(anywhere(crypto, ByteView(key).last(16)));
  EXPECT_FALSE(anywhere(crypto, mac_head));
}

// HKDF-Expand's last output block is the last MAC: key material that must not stay.
TEST(OpenSslKeyResidue, LastHkdfOutputIsGoneAfterForget) {
  OpenSslCrypto crypto;
  ASSERT_TRUE(crypto.ready());
  const Bytes prk = patterned(kHashSize, 0x17), info = {'k', 'e', 'y', 's'};
  const ByteView info_parts[] = {info};
  Bytes okm(64);
  ASSERT_EQ(crypto.hkdf_expand(prk, info_parts, okm), Error::ok);
  const ByteView last_block = ByteView(okm).subspan(32, 16);
  ASSERT_TRUE(anywhere(crypto, last_block));

  crypto.forget_keys();
  EXPECT_FALSE(anywhere(crypto, last_block));
  EXPECT_FALSE(anywhere(crypto, ByteView(prk).first(16)));
}

TEST(OpenSslKeyResidue, AesKeysAreGoneAfterForget) {
  OpenSslCrypto crypto;
  ASSERT_TRUE(crypto.ready());
  const Bytes key_a = patterned(kAeadKeySize, 0x21), key_b = patterned(kAeadKeySize, 0x95);
  const Bytes pt(20, 0x42);
  const AeadNonce nonce;
  Bytes ct(pt.size());
  AeadTag tag;
  ASSERT_EQ(crypto.aes128_gcm_seal(key_a, nonce, {}, pt, ct, tag), Error::ok);
  ASSERT_EQ(crypto.aes128_gcm_seal(key_b, nonce, {}, pt, ct, tag), Error::ok);
  // The backend's own key copies are always visible; the schedules only with some AES code.
  ASSERT_TRUE(anywhere(crypto, key_a));
  ASSERT_TRUE(anywhere(crypto, key_b));

  crypto.forget_keys();
  EXPECT_FALSE(anywhere(crypto, key_a));
  EXPECT_FALSE(anywhere(crypto, key_b));
  // Still correct afterwards.
  Bytes opened(pt.size());
  EXPECT_EQ(crypto.aes128_gcm_open(key_b, nonce, {}, ct, tag, opened), Error::ok);
  EXPECT_EQ(opened, pt);
}

// The schedule itself (not the backend's copy): seal under a key with a fresh object, wipe nothing
// of ours, and look for the key in OpenSSL's blocks only.
TEST(OpenSslKeyResidue, AesScheduleIsGoneAfterForget) {
  OpenSslCrypto crypto;
  ASSERT_TRUE(crypto.ready());
  const Bytes key = patterned(kAeadKeySize, 0x4b), pt(20, 0x42);
  const AeadNonce nonce;
  Bytes ct(pt.size());
  AeadTag tag;
  ASSERT_EQ(crypto.aes128_gcm_seal(key, nonce, {}, pt, ct, tag), Error::ok);
  auto in_openssl_blocks = [&] {
    const Bytes swapped = words_swapped(key);
    const std::lock_guard<std::mutex> lock(g_mutex);
    for (const auto& [p, n] : *g_live) {
      const ByteView block(static_cast<const std::uint8_t*>(p), n);
      if (contains(block, key) || contains(block, swapped)) return true;
    }
    return false;
  };
  if (!in_openssl_blocks()) {
    GTEST_SKIP() << "this OpenSSL's AES schedule does not contain the key in clear (vpaes?)";
  }
  crypto.forget_keys();
  EXPECT_FALSE(in_openssl_blocks());
}

}  // namespace
}  // namespace dsekp::test

int main(int argc, char** argv) {
  // Before anything can make OpenSSL allocate: afterwards OpenSSL refuses to switch functions.
  g_live = new std::unordered_map<void*, std::size_t>();
  if (CRYPTO_set_mem_functions(tracked_malloc, tracked_realloc, tracked_free) != 1) {
    std::fputs("CRYPTO_set_mem_functions failed: OpenSSL allocated before main\n", stderr);
    return 1;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
