// libFuzzer target: an admin request (`dsekp edge send`) as the edge takes it from the broker
// (edge/admin/): parsed, then its sealed payload opened and its MAC checked under a fixed admin key
// at a fixed time. Checks, besides no crash and no sanitizer report: a request refused by verify
// holds no payload in clear; one accepted holds at most kMaxPayloadSize bytes, and its encoding
// parses and verifies again to the same request. The seed corpus holds requests signed with
// that key (fuzz/corpus/fuzz_admin_request), so mutations start from ones that verify.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "admin_fuzz_key.hpp"
#include "edge/admin/admin_auth.hpp"
#include "edge/admin/admin_protocol.hpp"
#include "fuzz_support.hpp"

using namespace dsekp::edge::admin;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  DownlinkRequest request;
  std::string error;
  if (!parse(text, request, error) || request.payload_too_large) return 0;
  const AdminKey key = dsekp::fuzz::admin_fuzz_key();
  const std::uint64_t now_ms = dsekp::fuzz::kAdminFuzzNowMs;
  const AdminVerdict verdict = verify(key, "", request, now_ms);
  if (verdict != AdminVerdict::ok) {
    dsekp::fuzz::check(request.payload.empty(), "a refused request left its payload in clear");
    return 0;
  }
  dsekp::fuzz::check(request.payload.size() <= dsekp::kMaxPayloadSize,
                     "an accepted payload over the cap");
  DownlinkRequest again;
  dsekp::fuzz::check(parse(encode(request), again, error), "an accepted request did not re-parse");
  dsekp::fuzz::check(verify(key, "", again, now_ms) == AdminVerdict::ok &&
                         again.payload == request.payload && again.dev_id == request.dev_id &&
                         again.request_id == request.request_id,
                     "an accepted request changed through its encoding");
  return 0;
}
