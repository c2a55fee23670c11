// REKEY requests (PROTOCOL.md 6.3 step 1, 6.1 step 7): a DATA frame under a session the edge does
// not hold is answered with an authenticated request to rekey, so a device whose session the
// edge lost gets back in on its next frame instead of being refused until its seq runs out.
#include <gtest/gtest.h>

#include "service_fixture.hpp"

namespace dsekp::edge::testing {
namespace {

constexpr std::uint64_t kRekeyIntervalMs = 10'000;

class RekeyRequestTest : public EdgeServiceTest {
 protected:
  void forget_state(const DevId& dev_id) {
    ASSERT_TRUE(sqlite_->begin().ok());
    ASSERT_TRUE(sqlite_->remove(dev_id).ok());
    ASSERT_TRUE(sqlite_->commit().ok());
  }

  /// The REKEY request in `r`, decoded; fails the test unless there is exactly one.
  RekeyFrame request_in(const HandleResult& r, std::string_view dev_id, Encoding enc) {
    RekeyFrame request;
    EXPECT_TRUE(r.rekey_requested);
    EXPECT_EQ(r.publishes.size(), 1u);
    if (r.publishes.size() != 1) return request;
    const Publish& p = r.publishes[0];
    EXPECT_EQ(p.topic, "dsekp/rekey/" + std::string(dev_id));
    EXPECT_EQ(p.qos, 1);
    EXPECT_EQ(detect_encoding(p.payload), enc);
    EXPECT_EQ(decode_rekey(p.payload, request), Error::ok);
    return request;
  }
};

TEST_F(RekeyRequestTest, ADeviceWhoseSessionTheEdgeLostIsAskedToRekeyAndGetsBackIn) {
  for (const Encoding enc : {Encoding::json, Encoding::compact}) {
    ScriptedDevice device(material_, enc == Encoding::json ? 31 : 32);
    const std::uint64_t t0 = kNowMs + (enc == Encoding::json ? 0 : 60'000);
    handshake(device, enc, t0);
    ASSERT_TRUE(deliver(kDataTopic, device.data(kReading, t0, enc), t0).ok());
    forget_state(device.dev_id());  // a reset or lost state, a store restored from long ago

    DataFrame sent;
    const HandleResult r = deliver(kDataTopic, device.data(kReading, t0 + 1, enc, &sent), t0 + 2);
    EXPECT_EQ(std::string_view(r.reason_name()), "unknown_session");
    EXPECT_FALSE(r.frame.has_value());
    const RekeyFrame request = request_in(r, "esp32-01", enc);
    EXPECT_EQ(request.sessctr, sent.sessctr);
    EXPECT_EQ(request.seq, sent.seq);
    ASSERT_EQ(device.session().handle_rekey(request, t0 + 3), Error::ok);
    ASSERT_TRUE(device.session().rekey_due());

    // The device's new handshake and its frames go through again.
    handshake(device, enc, t0 + 2'000);
    const HandleResult back =
        deliver(kDataTopic, device.data(kReading, t0 + 2'001, enc), t0 + 2'002);
    EXPECT_TRUE(back.ok()) << back.reason_name();
    EXPECT_TRUE(back.session_confirmed);
  }
  EXPECT_EQ(tally_.rekey_requests, 2u);
}

TEST_F(RekeyRequestTest, AtMostOneRequestPerDevicePerInterval) {
  ScriptedDevice device(material_, 33);
  confirmed_session(device);
  forget_state(device.dev_id());
  ASSERT_TRUE(
      deliver(kDataTopic, device.data(kReading, kNowMs, Encoding::json), kNowMs).rekey_requested);
  for (std::uint64_t dt : {1u, 5'000u, 9'999u}) {
    const HandleResult r =
        deliver(kDataTopic, device.data(kReading, kNowMs, Encoding::json), kNowMs + dt);
    EXPECT_EQ(std::string_view(r.reason_name()), "unknown_session");
    EXPECT_FALSE(r.rekey_requested) << dt;
    EXPECT_TRUE(r.publishes.empty()) << dt;
  }
  EXPECT_TRUE(
      deliver(kDataTopic, device.data(kReading, kNowMs, Encoding::json), kNowMs + kRekeyIntervalMs)
          .rekey_requested);
  // Another device is not held back by this one's interval.
  const DeviceMaterial other = add_device("esp32-02");
  ScriptedDevice second(other, 34);
  confirmed_session(second);
  forget_state(second.dev_id());
  EXPECT_TRUE(deliver(kDataTopic, second.data(kReading, kNowMs, Encoding::json),
                      kNowMs + kRekeyIntervalMs + 1)
                  .rekey_requested);
}

TEST_F(RekeyRequestTest, NoRequestForASessionTheEdgeHoldsOrADeviceItDoesNotKnow) {
  ScriptedDevice device(material_, 35);
  handshake(device, Encoding::compact);
  DataFrame frame;
  const Bytes genuine = device.data(kReading, kNowMs, Encoding::compact, &frame);
  DataFrame forged = frame;
  forged.tag.mutable_view()[0] ^= 0x01;
  expect_rejected(deliver(kDataTopic, encoded(forged, Encoding::compact)), "auth_failed");
  ASSERT_TRUE(deliver(kDataTopic, genuine).ok());
  expect_rejected(deliver(kDataTopic, genuine), "replay");
  DataFrame unknown = frame;
  ASSERT_EQ(unknown.dev_id.assign("ghost-01"), Error::ok);
  expect_rejected(deliver(kDataTopic, encoded(unknown, Encoding::compact)), "unknown_device");
  EXPECT_EQ(tally_.rekey_requests, 0u);
}

// What an attacker who may publish on dsekp/data gets from forged frames: requests for sessions
// the edge does not hold, which the device refuses unless they name its current session and a
// seq it sent recently, and which never touch the session the edge does hold.
TEST_F(RekeyRequestTest, ARequestProvokedByAForgedFrameDoesNotMoveALiveDevice) {
  ScriptedDevice device(material_, 36);
  confirmed_session(device);
  DataFrame frame;
  (void)device.data(kReading, kNowMs, Encoding::json, &frame);
  DataFrame forged = frame;
  forged.sessctr = static_cast<std::uint16_t>(frame.sessctr + 1);  // a session the edge lacks
  const HandleResult r = deliver(kDataTopic, encoded(forged, Encoding::json));
  const RekeyFrame request = request_in(r, "esp32-01", Encoding::json);
  EXPECT_EQ(device.session().handle_rekey(request, kNowMs), Error::rekey_mismatch);
  EXPECT_FALSE(device.session().rekey_due());
  // A forged frame naming the live session but a seq the device has not sent.
  forged.sessctr = frame.sessctr;
  forged.seq = frame.seq + 100;
  forged.tag.mutable_view()[0] ^= 0x01;
  forget_state(device.dev_id());
  const RekeyFrame future =
      request_in(deliver(kDataTopic, encoded(forged, Encoding::json), kNowMs + kRekeyIntervalMs),
                 "esp32-01", Encoding::json);
  EXPECT_EQ(device.session().handle_rekey(future, kNowMs), Error::stale_rekey);
  EXPECT_FALSE(device.session().rekey_due());
}

// A full limiter drops the entries whose interval is over, not every entry: an attacker naming
// more registered devices than it holds cannot reset the devices whose interval still runs.
TEST(DeviceIntervalLimiterTest, WhenFullOnlyExpiredEntriesMakeRoom) {
  DeviceIntervalLimiter limiter(kRekeyIntervalMs);
  for (std::size_t i = 0; i + 1 < DeviceIntervalLimiter::kMaxDevices; ++i)
    limiter.sent("dev-" + std::to_string(i), 0);
  limiter.sent("recent", 9'000);
  EXPECT_FALSE(limiter.may_send("recent", 9'500));
  limiter.sent("newcomer", kRekeyIntervalMs);  // full: the 65,535 from t=0 have expired
  EXPECT_FALSE(limiter.may_send("recent", kRekeyIntervalMs + 500)) << "its interval still runs";
  EXPECT_FALSE(limiter.may_send("newcomer", kRekeyIntervalMs + 500));
  EXPECT_TRUE(limiter.may_send("dev-1", kRekeyIntervalMs + 500));
}

}  // namespace
}  // namespace dsekp::edge::testing
