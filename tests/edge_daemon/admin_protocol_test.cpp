// The admin messages of `dsekp edge send` (edge/admin/admin_protocol.hpp): round trips, and
// malformed requests refused with a reason, keeping the request id when it is usable.
#include "edge/admin/admin_protocol.hpp"
#include "edge/admin/admin_auth.hpp"

#include <gtest/gtest.h>

#include <string>

namespace dsekp::edge::admin {
namespace {

TEST(AdminProtocol, RequestsAndResultsRoundTrip) {
  DownlinkRequest request{"req-1", "esp32-01", {0x00, 0xff, 'a'}};
  AdminKey key{};
  key[5] = 9;
  sign(key, "", request, 1'764'460'800'000);
  DownlinkRequest parsed;
  std::string error;
  const std::string wire = encode(request);
  ASSERT_TRUE(parse(wire, parsed, error)) << error;
  EXPECT_EQ(parsed.request_id, "req-1");
  EXPECT_EQ(parsed.dev_id, "esp32-01");
  EXPECT_TRUE(parsed.payload.empty()) << "in clear before its seal is opened";
  EXPECT_EQ(parsed.sealed, request.sealed);
  EXPECT_FALSE(parsed.payload_too_large);
  EXPECT_EQ(verify(key, "", parsed, 1'764'460'800'000), AdminVerdict::ok);
  EXPECT_EQ(parsed.payload, request.payload);
  // The payload is on the wire only sealed: neither it nor its base64 appears in the JSON.
  EXPECT_EQ(wire.find("payload"), std::string::npos) << wire;
  EXPECT_EQ(wire.find("AP9h"), std::string::npos) << wire;  // base64 of 00 ff 61

  DownlinkResult result{"req-1", DownlinkStatus::sent, "ok", "esp32-01", 7};
  DownlinkResult back;
  ASSERT_TRUE(parse(encode(result), back, error)) << error;
  EXPECT_TRUE(back.ok());
  EXPECT_EQ(back.seq, std::optional<std::uint32_t>(7));
  EXPECT_NE(encode(result).find(R"("ok":true)"), std::string::npos) << "for older readers";
  for (const DownlinkStatus s :
       {DownlinkStatus::queued, DownlinkStatus::expired, DownlinkStatus::refused}) {
    result.status = s;
    result.seq.reset();
    ASSERT_TRUE(parse(encode(result), back, error)) << error;
    EXPECT_EQ(back.status, s);
    EXPECT_FALSE(back.ok()) << downlink_status_name(s);
    EXPECT_EQ(is_final(s), s != DownlinkStatus::queued);
  }
  EXPECT_FALSE(
      parse(R"({"request_id":"r","status":"maybe","reason":"ok","dev_id":"d"})", back, error));
  EXPECT_EQ(request_topic("site1/"), "site1/dsekp/admin/downlink");
  EXPECT_EQ(result_topic("", "req-1"), "dsekp/admin/result/req-1");
}

// A requester's own MQTT 5 response topic must stay under the result topics: otherwise a
// request could make the edge publish on a device's topics (it may write there).
TEST(AdminProtocol, AResponseTopicMustBeUnderTheResultTopics) {
  EXPECT_TRUE(valid_response_topic("", "dsekp/admin/result/node-red/42"));
  EXPECT_TRUE(valid_response_topic("site1/", "site1/dsekp/admin/result/x"));
  EXPECT_FALSE(valid_response_topic("", "dsekp/admin/result/"));
  EXPECT_FALSE(valid_response_topic("", "dsekp/down/esp32-01"));
  EXPECT_FALSE(valid_response_topic("site1/", "dsekp/admin/result/x")) << "another prefix";
  EXPECT_FALSE(valid_response_topic("", "dsekp/admin/result/+"));
  EXPECT_FALSE(valid_response_topic("", "dsekp/admin/result/#"));
  EXPECT_FALSE(valid_response_topic("", "dsekp/admin/result/" + std::string(300, 'a')));
}

TEST(AdminProtocol, MalformedRequestsAreRefused) {
  DownlinkRequest r;
  std::string error;
  EXPECT_FALSE(parse("not json", r, error));
  EXPECT_FALSE(parse(R"({"request_id":"a/b","dev_id":"d","sealed_b64":""})", r, error));
  EXPECT_EQ(r.request_id, "");  // a '/' would escape the result topic: no answer at all
  EXPECT_FALSE(parse(R"({"request_id":"ok-id","dev_id":5,"sealed_b64":""})", r, error));
  EXPECT_EQ(r.request_id, "ok-id");  // kept: the edge answers bad_request
  EXPECT_FALSE(parse(R"({"request_id":"ok-id","dev_id":"d","sealed_b64":"YQ"})", r, error));
  EXPECT_NE(error.find("base64"), std::string::npos);
  // A dev_id no device can have is refused before anything is decoded or opened.
  for (const std::string& dev_id : {std::string("a b"), std::string(65, 'd'), std::string()}) {
    EXPECT_FALSE(
        parse(R"({"request_id":"ok-id","dev_id":")" + dev_id + R"(","sealed_b64":""})", r, error))
        << dev_id;
    EXPECT_EQ(error, "bad dev_id");
  }
  // A payload in clear is refused by name, whatever else the request holds.
  EXPECT_FALSE(
      parse(R"({"request_id":"old","dev_id":"d","payload_b64":"b24=","sealed_b64":"","mac":"00"})",
            r, error));
  EXPECT_NE(error.find("in clear"), std::string::npos) << error;
  EXPECT_EQ(r.request_id, "old");
  // More than nonce + 1024 + tag bytes: flagged, not decoded.
  const std::string big = std::string(1408, 'Q');  // base64 of 1056 bytes
  ASSERT_TRUE(parse(R"({"request_id":"big","dev_id":"d","sealed_b64":")" + big + "\"}", r, error))
      << error;
  EXPECT_TRUE(r.payload_too_large);
  EXPECT_FALSE(valid_request_id(std::string(65, 'a')));
  EXPECT_TRUE(valid_request_id(std::string(64, 'a')));
}

}  // namespace
}  // namespace dsekp::edge::admin

namespace dsekp::edge::admin {
namespace {

// The MAC input is a format a fleet tool holding the admin key may implement itself: pinned by
// a known answer from Python's hmac over label || len+prefix || len+request_id || len+dev_id ||
// be64 ts_ms || be16 payload size || payload.
TEST(AdminAuth, TheMacMatchesItsKnownAnswer) {
  AdminKey key{};
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<std::uint8_t>(i);
  DownlinkRequest r;
  r.request_id = "req-1";
  r.dev_id = "esp32-01";
  r.ts_ms = 1'765'000'000'123;
  r.payload = {'r', 'e', 'l', 'a', 'y', ' ', 'o', 'n'};
  EXPECT_EQ(request_mac(key, "site1/", r),
            "b29c0c6b4cc05861971e66cd33706c1a0837acf07ca6f2ec5983d77e8535d826");
}

// The request's MAC covers every field the edge acts on: a change to any of them, a MAC under
// another key, no MAC, or an age beyond the limit is refused; the MAC survives the JSON.
TEST(AdminAuth, TheMacCoversEveryFieldAndTheAgeIsBounded) {
  AdminKey key{};
  key[0] = 7;
  DownlinkRequest r;
  r.request_id = "req-1";
  r.dev_id = "esp32-01";
  r.payload = {'o', 'n'};
  constexpr std::uint64_t kNow = 1'764'460'800'000;
  EXPECT_EQ(verify(key, "", r, kNow), AdminVerdict::unauthenticated);
  sign(key, "", r, kNow);
  EXPECT_EQ(r.mac_hex.size(), 64u);
  EXPECT_EQ(verify(key, "", r, kNow), AdminVerdict::ok);
  DownlinkRequest parsed;
  std::string error;
  ASSERT_TRUE(parse(encode(r), parsed, error)) << error;
  EXPECT_EQ(verify(key, "", parsed, kNow + kMaxRequestAgeMs), AdminVerdict::ok);
  EXPECT_EQ(verify(key, "", parsed, kNow + kMaxRequestAgeMs + 1), AdminVerdict::stale_request);
  EXPECT_EQ(verify(key, "", parsed, kNow - kMaxRequestAgeMs - 1), AdminVerdict::stale_request);
  AdminKey other = key;
  other[31] ^= 1;
  EXPECT_EQ(verify(other, "", r, kNow), AdminVerdict::bad_mac);
  const auto changed = [&](auto mutate) {
    DownlinkRequest c = r;
    mutate(c);
    return verify(key, "", c, kNow);
  };
  EXPECT_EQ(changed([](DownlinkRequest& c) { c.request_id = "req-2"; }), AdminVerdict::bad_mac);
  EXPECT_EQ(changed([](DownlinkRequest& c) { c.dev_id = "esp32-02"; }), AdminVerdict::bad_mac);
  // The payload as it travels: any change to its seal (nonce, ciphertext, tag) or a seal from
  // another request is refused; so is a request without one.
  for (const std::size_t at : {std::size_t{0}, std::size_t{12}, r.sealed.size() - 1})
    EXPECT_EQ(changed([at](DownlinkRequest& c) { c.sealed[at] ^= 1; }), AdminVerdict::bad_mac)
        << at;
  EXPECT_EQ(changed([](DownlinkRequest& c) { c.sealed.push_back(0); }), AdminVerdict::bad_mac);
  EXPECT_EQ(changed([](DownlinkRequest& c) { c.sealed.clear(); }), AdminVerdict::bad_mac);
  DownlinkRequest other_request{"req-1", "esp32-01", {'o', 'f', 'f'}};
  sign(key, "", other_request, kNow);
  EXPECT_EQ(changed([&](DownlinkRequest& c) { c.sealed = other_request.sealed; }),
            AdminVerdict::bad_mac)
      << "another command's seal under the first one's MAC";
  EXPECT_EQ(changed([](DownlinkRequest& c) { c.ts_ms += 1; }), AdminVerdict::bad_mac);
  // A refused request keeps no command in clear, also when its seal opened and its MAC or age
  // then failed (found by fuzz_admin_request).
  for (const std::uint64_t ts : {r.ts_ms + 1, r.ts_ms}) {
    DownlinkRequest c = r;
    c.ts_ms = ts;
    c.payload = {'x'};
    const AdminVerdict v = verify(key, "", c, ts == r.ts_ms ? kNow + kMaxRequestAgeMs + 1 : kNow);
    EXPECT_NE(v, AdminVerdict::ok);
    EXPECT_TRUE(c.payload.empty()) << admin_verdict_name(v);
  }
  EXPECT_EQ(changed([](DownlinkRequest& c) { c.mac_hex[0] ^= 1; }), AdminVerdict::bad_mac);
  EXPECT_EQ(changed([](DownlinkRequest& c) { c.mac_hex.pop_back(); }), AdminVerdict::bad_mac);
  EXPECT_EQ(verify(key, "site2/", r, kNow), AdminVerdict::bad_mac) << "another deployment";
  EXPECT_EQ(changed([](DownlinkRequest& c) { c.dev_id = std::string(300, 'a'); }),
            AdminVerdict::bad_mac);
}

}  // namespace
}  // namespace dsekp::edge::admin
