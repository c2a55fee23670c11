// On-target known-answer suite of the mbedTLS backend (the device's CryptoBackend), run under
// QEMU: RFC 5869 A.1-A.3 (HKDF-SHA256 Extract and Expand, info split in parts as the core passes
// it), RFC 4231 test cases 1-7 (HMAC-SHA256, case 5 truncated to 128 bits) and the McGrew-Viega
// GCM spec test cases 2-4 (AES-128-GCM seal and open), plus a tampered tag, which must fail with
// auth_failed and leave the output zeroed. Prints "KAT <name> ok|FAIL"; see mcu_test.hpp.
#include <array>

#include "crypto/mbedtls/mbedtls_crypto.hpp"
#include "crypto/rfc5869_vectors.hpp"
#include "kat_vectors.hpp"
#include "mcu_test.hpp"

namespace {

using dsekp::ByteView;
using dsekp::Error;
using dsekp::MutableByteView;
using mcu_test::check;
using mcu_test::from_hex;

// Large enough for every vector (RFC 4231 case 7: 152 bytes of data, 131 bytes of key).
using Buffer = std::array<std::uint8_t, 256>;

ByteView decode(std::string_view hex, Buffer& buf) {
  const std::size_t n = from_hex(hex, buf);
  check(n * 2 == hex.size(), "vector hex decodes");
  return ByteView(buf.data(), n);
}

void report(std::string_view name, int number, bool ok) {
  mcu_test::line_begin("KAT", name);
  mcu_test::put_u64(static_cast<std::uint64_t>(number));
  mcu_test::put(ok ? " ok\n" : " FAIL\n");
}

void hkdf_cases(dsekp::MbedtlsCrypto& crypto) {
  int number = 0;
  for (const auto& c : dsekp::test::kRfc5869) {
    ++number;
    Buffer ikm_b, salt_b, info_b, prk_b, okm_b;
    const ByteView ikm = decode(c.ikm, ikm_b), salt = decode(c.salt, salt_b);
    const ByteView info = decode(c.info, info_b);
    const ByteView prk_expected = decode(c.prk, prk_b), okm_expected = decode(c.okm, okm_b);
    std::array<std::uint8_t, dsekp::kHashSize> prk{};
    Buffer okm{};
    const std::array<ByteView, 1> ikm_parts{ikm};
    // The core passes info in several parts: split it in two to cover that path.
    const std::array<ByteView, 2> info_parts{info.first(info.size() / 2),
                                             info.subspan(info.size() / 2)};
    bool ok = check(crypto.hkdf_extract(salt, ikm_parts, prk) == Error::ok, "hkdf_extract") &&
              check(mcu_test::equal(prk, prk_expected), "HKDF PRK");
    ok = ok &&
         check(crypto.hkdf_expand(prk, info_parts, MutableByteView(okm.data(), c.length)) ==
                   Error::ok,
               "hkdf_expand") &&
         check(mcu_test::equal(ByteView(okm.data(), c.length), okm_expected), "HKDF OKM");
    report("rfc5869", number, ok);
  }
}

void hmac_cases(dsekp::MbedtlsCrypto& crypto) {
  for (const auto& c : mcu_kat::kRfc4231) {
    Buffer key_b, data_b, mac_b;
    const ByteView key = decode(c.key, key_b), data = decode(c.data, data_b);
    const ByteView expected = decode(c.mac, mac_b);
    dsekp::Sha256Digest mac;
    const std::array<ByteView, 1> parts{data};
    const bool ok =
        check(crypto.hmac_sha256(key, parts, mac) == Error::ok, "hmac_sha256") &&
        check(mcu_test::equal(mac.view().first(expected.size()), expected), "HMAC value");
    report("rfc4231", c.number, ok);
  }
}

void gcm_cases(dsekp::MbedtlsCrypto& crypto) {
  for (const auto& c : mcu_kat::kGcmSpec) {
    Buffer key_b, pt_b, iv_b, aad_b, ct_b, tag_b;
    const ByteView key = decode(c.key, key_b), pt = decode(c.plaintext, pt_b);
    const ByteView iv = decode(c.iv, iv_b), aad = decode(c.aad, aad_b);
    const ByteView ct_expected = decode(c.ciphertext, ct_b), tag_expected = decode(c.tag, tag_b);
    dsekp::AeadNonce nonce;
    dsekp::AeadTag tag, wanted_tag;
    bool ok = check(nonce.assign(iv), "GCM IV is 12 bytes") &&
              check(wanted_tag.assign(tag_expected), "GCM tag is 16 bytes");
    Buffer ct{}, back{};
    ok = ok &&
         check(crypto.aes128_gcm_seal(key, nonce, aad, pt, MutableByteView(ct.data(), pt.size()),
                                      tag) == Error::ok,
               "aes128_gcm_seal") &&
         check(mcu_test::equal(ByteView(ct.data(), pt.size()), ct_expected), "GCM ciphertext") &&
         check(tag.equals(wanted_tag), "GCM tag");
    ok = ok &&
         check(crypto.aes128_gcm_open(key, nonce, aad, ct_expected, wanted_tag,
                                      MutableByteView(back.data(), pt.size())) == Error::ok,
               "aes128_gcm_open") &&
         check(mcu_test::equal(ByteView(back.data(), pt.size()), pt), "GCM plaintext");
    // A flipped tag bit: auth_failed, and nothing of the plaintext left in the output.
    dsekp::AeadTag bad = wanted_tag;
    bad.data()[0] ^= 1;
    Buffer junk;
    junk.fill(0x5a);
    const Error e = crypto.aes128_gcm_open(key, nonce, aad, ct_expected, bad,
                                           MutableByteView(junk.data(), pt.size()));
    bool zeroed = true;
    for (std::size_t i = 0; i < pt.size(); ++i) zeroed = zeroed && junk[i] == 0;
    ok = check(e == Error::auth_failed, "GCM tampered tag is auth_failed") &&
         check(zeroed, "GCM output zeroed after auth failure") && ok;
    report("gcm_spec", c.number, ok);
  }
}

}  // namespace

int main() {
  dsekp::MbedtlsCrypto crypto;
  check(crypto.ready(), "MbedtlsCrypto ready (mbedTLS contexts from the static pool)");
  hkdf_cases(crypto);
  hmac_cases(crypto);
  gcm_cases(crypto);
  // Run the HMAC cases again after forget_keys(): the backend must re-key from scratch.
  crypto.forget_keys();
  hmac_cases(crypto);
  mcu_test::finish("KAT");
}
