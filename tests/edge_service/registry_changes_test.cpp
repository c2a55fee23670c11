// Registry changes reach a running EdgeService without a restart: after a key rotation the old
// session's frames are refused and its keys deleted, and the device gets back in with a new
// handshake under the new secret; a removed device is unknown; a device added while the edge
// runs is served at once. Inside batches, where the registry's answers are kept from one batch
// to the next while it is unchanged, a change by another process takes effect at the next batch.
#include <gtest/gtest.h>

#include "edge/registry/sqlite_db.hpp"
#include "service_fixture.hpp"

namespace dsekp::edge::testing {
namespace {

TEST_F(EdgeServiceTest, RotationEndsTheOldSessionAndANewHandshakeWorks) {
  ScriptedDevice old_device(material_, 51);
  handshake(old_device, Encoding::json);
  ASSERT_TRUE(deliver(kDataTopic, old_device.data(kReading, kNowMs, Encoding::json)).ok());
  const Bytes old_frame = old_device.data(kReading, kNowMs + 1, Encoding::json);

  DeviceMaterial rotated;
  const RegistryStatus s = registry_->rotate("esp32-01", rotated);
  ASSERT_TRUE(s.ok()) << s.message();

  const HandleResult first = deliver(kDataTopic, old_frame);
  expect_rejected(first, "unknown_session");
  EXPECT_TRUE(first.stale_state_dropped);
  EXPECT_FALSE(has_state(old_device.dev_id()));  // the old session keys are gone from disk
  const HandleResult second =
      deliver(kDataTopic, old_device.data(kReading, kNowMs + 2, Encoding::json));
  expect_rejected(second, "unknown_session");
  EXPECT_FALSE(second.stale_state_dropped);
  // Nor can the old secret open a new session.
  expect_rejected(deliver(kInitTopic, old_device.init(Encoding::json, kNowS + 5)), "bad_proof");
  expect_rejected(deliver(kPskTopic, old_device.psk(kReading, 0, kNowMs, Encoding::json)),
                  "auth_failed");

  ScriptedDevice new_device(rotated, 52);
  handshake(new_device, Encoding::compact);
  const HandleResult r = deliver(kDataTopic, new_device.data(kReading, kNowMs, Encoding::compact));
  ASSERT_TRUE(r.ok()) << r.reason_name();
  EXPECT_TRUE(r.session_confirmed);
  EXPECT_TRUE(deliver(kPskTopic, new_device.psk(kReading, 0, kNowMs, Encoding::json)).ok());
  EXPECT_EQ(tally_.stale_states_dropped, 1u);
}

TEST_F(EdgeServiceTest, AnInitUnderRotatedKeysReplacesTheStaleState) {
  ScriptedDevice old_device(material_, 53);
  handshake(old_device, Encoding::json);
  ASSERT_TRUE(deliver(kDataTopic, old_device.data(kReading, kNowMs, Encoding::json)).ok());
  DeviceMaterial rotated;
  ASSERT_TRUE(registry_->rotate("esp32-01", rotated).ok());

  ScriptedDevice new_device(rotated, 54);
  // The device's clock went back by a minute since its old INIT: the old state's newest `t`
  // belonged to the old secret and must not hold the new one back.
  const HandleResult init = handshake(new_device, Encoding::json, kNowMs - 60'000);
  EXPECT_TRUE(init.stale_state_dropped);
  ASSERT_NE(new_device.session().sessctr(), old_device.session().sessctr());
  expect_rejected(deliver(kDataTopic, old_device.data(kReading, kNowMs, Encoding::json)),
                  "unknown_session");
  EXPECT_TRUE(deliver(kDataTopic, new_device.data(kReading, kNowMs, Encoding::json)).ok());
  // No downlink goes out under the old session either (none is confirmed but the new one).
  const HandleResult down = send_downlink("esp32-01", bytes_of("x"), kNowMs);
  ASSERT_TRUE(down.ok());
  std::string text;
  EXPECT_EQ(new_device.open_down(down.publishes[0].payload, text), Error::ok);
}

TEST_F(EdgeServiceTest, RemovedDeviceIsUnknownAndReAddingIsANewDevice) {
  ScriptedDevice device(material_, 55);
  handshake(device, Encoding::json);
  ASSERT_TRUE(deliver(kDataTopic, device.data(kReading, kNowMs, Encoding::json)).ok());
  ASSERT_TRUE(registry_->remove("esp32-01").ok());
  expect_rejected(deliver(kDataTopic, device.data(kReading, kNowMs + 1, Encoding::json)),
                  "unknown_device");
  expect_rejected(deliver(kInitTopic, device.init(Encoding::json, kNowS + 1)), "unknown_device");
  expect_rejected(deliver(kPskTopic, device.psk(kReading, 0, kNowMs, Encoding::json)),
                  "unknown_device");
  expect_rejected(send_downlink("esp32-01", bytes_of("x"), kNowMs), "unknown_device");

  // Added again: a new generation and a new secret. The old state is stale for it.
  const DeviceMaterial again = add_device("esp32-01");
  expect_rejected(deliver(kDataTopic, device.data(kReading, kNowMs + 2, Encoding::json)),
                  "unknown_session");
  ScriptedDevice reborn(again, 56);
  handshake(reborn, Encoding::json);
  EXPECT_TRUE(deliver(kDataTopic, reborn.data(kReading, kNowMs, Encoding::json)).ok());
}

// A stored state without a recorded credential generation (written by something else than the
// service, or before the record existed) is not trusted.
TEST_F(EdgeServiceTest, AStateWithoutARecordedGenerationIsStale) {
  ScriptedDevice device(material_, 58);
  handshake(device, Encoding::json);
  ASSERT_EQ(sqlite3_exec(sqlite_->connection(), "DELETE FROM credential_generation", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  const HandleResult r = deliver(kDataTopic, device.data(kReading, kNowMs, Encoding::json));
  expect_rejected(r, "unknown_session");
  EXPECT_TRUE(r.stale_state_dropped);
  handshake(device, Encoding::json, kNowMs + 1000);
  EXPECT_TRUE(deliver(kDataTopic, device.data(kReading, kNowMs, Encoding::json)).ok());
}

TEST_F(EdgeServiceTest, DeviceAddedWhileRunningIsServedAtOnce) {
  const DeviceMaterial added = add_device("esp32-99");
  ScriptedDevice device(added, 57);
  const HandleResult r = handshake(device, Encoding::compact);
  EXPECT_EQ(r.publishes[0].topic, "dsekp/init/ack/esp32-99");
  EXPECT_TRUE(deliver(kDataTopic, device.data(kReading, kNowMs, Encoding::compact)).ok());
}

// The first batch leaves esp32-01's credentials in the service's cache; a rotation by another
// process (its own connection to the registry file) must reach the next batch all the same.
TEST_F(EdgeServiceTest, ARotationByAnotherProcessTakesEffectAtTheNextBatch) {
  ScriptedDevice old_device(material_, 57);
  handshake(old_device, Encoding::json);
  ASSERT_TRUE(service_->begin_batch().ok());
  ASSERT_TRUE(deliver(kDataTopic, old_device.data(kReading, kNowMs, Encoding::json)).ok());
  ASSERT_TRUE(service_->commit_batch().ok());

  std::unique_ptr<DeviceRegistry> other;
  ASSERT_TRUE(DeviceRegistry::open(dir_.file("registry.db"), OpenMode::existing_only, other).ok());
  DeviceMaterial rotated;
  ASSERT_TRUE(other->rotate("esp32-01", rotated).ok());

  ASSERT_TRUE(service_->begin_batch().ok());
  expect_rejected(deliver(kDataTopic, old_device.data(kReading, kNowMs + 1, Encoding::json)),
                  "unknown_session");
  expect_rejected(deliver(kInitTopic, old_device.init(Encoding::json, kNowS + 5)), "bad_proof");
  ScriptedDevice new_device(rotated, 58);
  handshake(new_device, Encoding::json);
  ASSERT_TRUE(service_->commit_batch().ok());
}

// A registry overwritten in place from an older copy can repeat a generation the cache has seen
// with other secrets in it; any commit by another connection makes the next batch read again.
TEST_F(EdgeServiceTest, ASecretChangedWithoutANewGenerationIsReadAtTheNextBatch) {
  ScriptedDevice device(material_, 59);
  ASSERT_TRUE(service_->begin_batch().ok());
  handshake(device, Encoding::json);
  ASSERT_TRUE(service_->commit_batch().ok());

  SqliteDb raw;
  ASSERT_TRUE(raw.open(dir_.file("registry.db")).ok());
  ASSERT_TRUE(
      raw.exec("UPDATE devices SET dev_secret = zeroblob(32) WHERE dev_id = 'esp32-01'").ok());

  ASSERT_TRUE(service_->begin_batch().ok());
  expect_rejected(deliver(kInitTopic, device.init(Encoding::json, kNowS + 5)), "bad_proof");
  ASSERT_TRUE(service_->commit_batch().ok());
}

}  // namespace
}  // namespace dsekp::edge::testing
