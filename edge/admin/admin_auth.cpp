// Admin request MACs (see admin_auth.hpp).
#include "edge/admin/admin_auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <string_view>
#include <vector>

#include "crypto/openssl/openssl_crypto.hpp"
#include "dsekp/crypto.hpp"
#include "edge/registry/text_encoding.hpp"

namespace dsekp::edge::admin {
namespace {

constexpr std::string_view kLabel = "DSEKP admin downlink v1";

// The MAC input and the seal's AAD (below) write the prefix, request_id and dev_id each after its
// length as one byte, so a longer field (none is valid) is never MACed, sealed or opened: no two
// requests share an input.
bool fields_fit(std::string_view prefix, const DownlinkRequest& r) {
  return prefix.size() <= 255 && r.request_id.size() <= 255 && r.dev_id.size() <= 255;
}

// The three fields, each after its length byte; only for requests that passed fields_fit().
void append_fields(std::vector<std::uint8_t>& out, std::string_view prefix,
                   const DownlinkRequest& r) {
  for (const std::string_view field :
       {prefix, std::string_view(r.request_id), std::string_view(r.dev_id)}) {
    out.push_back(static_cast<std::uint8_t>(field.size()));
    out.insert(out.end(), field.begin(), field.end());
  }
}

std::vector<std::uint8_t> mac_input(std::string_view prefix, const DownlinkRequest& r) {
  std::vector<std::uint8_t> in(kLabel.begin(), kLabel.end());
  append_fields(in, prefix, r);
  std::array<std::uint8_t, 8 + 2> numbers{};  // ts_ms, then the payload's size (at most 0xffff)
  store_be64(numbers.data(), r.ts_ms);
  store_be16(numbers.data() + 8, static_cast<std::uint16_t>(r.payload.size()));
  in.insert(in.end(), numbers.begin(), numbers.end());
  in.insert(in.end(), r.payload.begin(), r.payload.end());
  return in;
}

// The payload travels sealed (AES-128-GCM) so that a broker that lets others read the admin
// topic shows them no downlink command: the key is HKDF-Expand(admin_key, kPayloadKeyLabel, 16)
// (the admin key is 32 random bytes, a valid PRK), the nonce 12 random bytes, the AAD the label,
// the prefix, request_id and dev_id (each after its length as one byte), and `sealed` is
// nonce || ciphertext || tag.
constexpr std::string_view kPayloadKeyLabel = "DSEKP admin downlink v1 payload key";
constexpr std::string_view kPayloadAadLabel = "DSEKP admin downlink v1 payload";

std::vector<std::uint8_t> payload_aad(std::string_view prefix, const DownlinkRequest& r) {
  std::vector<std::uint8_t> aad(kPayloadAadLabel.begin(), kPayloadAadLabel.end());
  append_fields(aad, prefix, r);
  return aad;
}

// The payload key in `out`, wiped by the caller.
bool payload_key(OpenSslCrypto& crypto, const AdminKey& key, std::array<std::uint8_t, 16>& out) {
  const ByteView info[] = {bytes_of(kPayloadKeyLabel)};
  return crypto.hkdf_expand(ByteView(key.data(), key.size()), info, out) == Error::ok;
}

bool seal_payload(const AdminKey& key, std::string_view prefix, DownlinkRequest& r) {
  if (!fields_fit(prefix, r)) return false;
  OpenSslCrypto crypto;
  OpenSslRng rng;
  std::array<std::uint8_t, 16> k{};
  AeadNonce nonce;
  AeadTag tag;
  std::vector<std::uint8_t> ct(r.payload.size());
  const std::vector<std::uint8_t> aad = payload_aad(prefix, r);
  const bool ok = payload_key(crypto, key, k) && rng.fill(nonce.mutable_view()) == Error::ok &&
                  crypto.aes128_gcm_seal(k, nonce, aad, r.payload, ct, tag) == Error::ok;
  secure_wipe(k);
  if (!ok) return false;
  r.sealed.assign(nonce.data(), nonce.data() + kNonceSize);
  r.sealed.insert(r.sealed.end(), ct.begin(), ct.end());
  r.sealed.insert(r.sealed.end(), tag.data(), tag.data() + kTagSize);
  return true;
}

bool open_payload(const AdminKey& key, std::string_view prefix, DownlinkRequest& r) {
  if (!fields_fit(prefix, r) || r.sealed.size() < kNonceSize + kTagSize) return false;
  const std::size_t n = r.sealed.size() - kNonceSize - kTagSize;
  const AeadNonce nonce =
      AeadNonce::from(std::span<const std::uint8_t, kNonceSize>(r.sealed.data(), kNonceSize));
  const AeadTag tag = AeadTag::from(
      std::span<const std::uint8_t, kTagSize>(r.sealed.data() + kNonceSize + n, kTagSize));
  OpenSslCrypto crypto;
  std::array<std::uint8_t, 16> k{};
  std::vector<std::uint8_t> plaintext(n);
  const std::vector<std::uint8_t> aad = payload_aad(prefix, r);
  const bool ok = payload_key(crypto, key, k) &&
                  crypto.aes128_gcm_open(k, nonce, aad, ByteView(r.sealed.data() + kNonceSize, n),
                                         tag, plaintext) == Error::ok;
  secure_wipe(k);
  if (!ok) return false;
  r.payload = std::move(plaintext);
  return true;
}

bool compute(const AdminKey& key, std::string_view prefix, const DownlinkRequest& r,
             std::array<std::uint8_t, 32>& out) {
  // The payload's length is two bytes of the MAC input.
  if (!fields_fit(prefix, r) || r.payload.size() > 0xffff) return false;
  std::vector<std::uint8_t> in = mac_input(prefix, r);  // ends with the payload: wiped below
  unsigned int size = 0;
  const bool ok = HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), in.data(), in.size(),
                       out.data(), &size) != nullptr &&
                  size == out.size();
  secure_wipe(in);
  return ok;
}

}  // namespace

std::string request_mac(const AdminKey& key, std::string_view prefix,
                        const DownlinkRequest& request) {
  std::array<std::uint8_t, 32> mac{};
  if (!compute(key, prefix, request, mac)) return {};
  return to_hex(ByteView(mac.data(), mac.size()));
}

void sign(const AdminKey& key, std::string_view prefix, DownlinkRequest& request,
          std::uint64_t now_ms) {
  request.ts_ms = now_ms;
  request.sealed.clear();
  request.mac_hex = request_mac(key, prefix, request);
  // No MAC without the sealed payload: a request that cannot be sealed goes out unsigned.
  if (!request.mac_hex.empty() && !seal_payload(key, prefix, request)) request.mac_hex.clear();
}

const char* admin_verdict_name(AdminVerdict v) noexcept {
  switch (v) {
    case AdminVerdict::ok:
      return "ok";
    case AdminVerdict::unauthenticated:
      return "unauthenticated";
    case AdminVerdict::bad_mac:
      return "bad_mac";
    case AdminVerdict::stale_request:
      return "stale_request";
  }
  return "unknown";
}

AdminVerdict verify(const AdminKey& key, std::string_view prefix, DownlinkRequest& request,
                    std::uint64_t now_ms) {
  if (request.mac_hex.empty()) return AdminVerdict::unauthenticated;
  // The payload exists in clear only once its seal has opened under the admin key, and stays
  // only if the whole request is accepted.
  request.payload.clear();
  if (!open_payload(key, prefix, request)) return AdminVerdict::bad_mac;
  const auto refuse = [&request](AdminVerdict v) {
    secure_wipe(request.payload);
    request.payload.clear();
    return v;
  };
  // Compared as the lowercase hex both sides write, in constant time.
  const std::string expected = request_mac(key, prefix, request);
  if (expected.empty() || request.mac_hex.size() != expected.size() ||
      CRYPTO_memcmp(request.mac_hex.data(), expected.data(), expected.size()) != 0)
    return refuse(AdminVerdict::bad_mac);
  const std::uint64_t age =
      now_ms > request.ts_ms ? now_ms - request.ts_ms : request.ts_ms - now_ms;
  return age > kMaxRequestAgeMs ? refuse(AdminVerdict::stale_request) : AdminVerdict::ok;
}

}  // namespace dsekp::edge::admin
