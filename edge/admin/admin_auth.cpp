// Admin request MACs (see admin_auth.hpp).
#include "edge/admin/admin_auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <string_view>
#include <vector>

#include "edge/registry/text_encoding.hpp"

namespace dsekp::edge::admin {
namespace {

constexpr std::string_view kLabel = "DSEKP admin downlink v1";

std::vector<std::uint8_t> mac_input(std::string_view prefix, const DownlinkRequest& r) {
  std::vector<std::uint8_t> in(kLabel.begin(), kLabel.end());
  in.push_back(static_cast<std::uint8_t>(prefix.size() > 255 ? 255 : prefix.size()));
  in.insert(in.end(), prefix.begin(), prefix.end());
  const auto text = [&](const std::string& s) {
    in.push_back(static_cast<std::uint8_t>(s.size() > 255 ? 255 : s.size()));
    in.insert(in.end(), s.begin(), s.end());
  };
  text(r.request_id);
  text(r.dev_id);
  for (int shift = 56; shift >= 0; shift -= 8)
    in.push_back(static_cast<std::uint8_t>(r.ts_ms >> shift));
  in.push_back(static_cast<std::uint8_t>(r.payload.size() >> 8));
  in.push_back(static_cast<std::uint8_t>(r.payload.size()));
  in.insert(in.end(), r.payload.begin(), r.payload.end());
  return in;
}

bool compute(const AdminKey& key, std::string_view prefix, const DownlinkRequest& r,
             std::array<std::uint8_t, 32>& out) {
  // Lengths are one byte each: longer fields (none is valid) get no MAC at all.
  if (prefix.size() > 255 || r.request_id.size() > 255 || r.dev_id.size() > 255 ||
      r.payload.size() > 0xffff)
    return false;
  const std::vector<std::uint8_t> in = mac_input(prefix, r);
  unsigned int size = 0;
  return HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), in.data(), in.size(),
              out.data(), &size) != nullptr &&
         size == out.size();
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
  request.mac_hex = request_mac(key, prefix, request);
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

AdminVerdict verify(const AdminKey& key, std::string_view prefix, const DownlinkRequest& request,
                    std::uint64_t now_ms) {
  if (request.mac_hex.empty()) return AdminVerdict::unauthenticated;
  // Compared as the lowercase hex both sides write, in constant time.
  const std::string expected = request_mac(key, prefix, request);
  if (expected.empty() || request.mac_hex.size() != expected.size() ||
      CRYPTO_memcmp(request.mac_hex.data(), expected.data(), expected.size()) != 0)
    return AdminVerdict::bad_mac;
  const std::uint64_t age =
      now_ms > request.ts_ms ? now_ms - request.ts_ms : request.ts_ms - now_ms;
  return age > kMaxRequestAgeMs ? AdminVerdict::stale_request : AdminVerdict::ok;
}

}  // namespace dsekp::edge::admin
