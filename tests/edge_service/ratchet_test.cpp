// The ratchet through the edge service (PROTOCOL.md 6.6): a device registered with `ratchet`
// steps its secret after every session and the edge's stored state follows, across edge
// restarts, lost confirmations, failed commits and key rotations; REKEY requests are proven under
// the state's secret.
#include <gtest/gtest.h>

#include "dsekp/key_schedule.hpp"
#include "service_fixture.hpp"
#include "tests/support/memory_secret_store.hpp"

namespace dsekp::edge::testing {
namespace {

class RatchetServiceTest : public EdgeServiceTest {
 protected:
  RatchetServiceTest() {
    const RegistryStatus s = registry_->add("esp32-r", ratcheting_, {}, /*ratchet=*/true);
    EXPECT_TRUE(s.ok()) << s.message();
  }

  /// The device as it boots now: from what its flash holds.
  std::unique_ptr<ScriptedDevice> boot(std::uint64_t seed) {
    ratchet_ = std::make_unique<DeviceRatchet>(flash_);  // RAM is lost with a power cut
    DeviceConfig config;
    config.ratchet = ratchet_.get();
    return std::make_unique<ScriptedDevice>(flash_.read(device_credentials(ratcheting_)), config,
                                            seed);
  }

  /// The ratchet part of the stored state: its epoch, and whether its secret is `expected`.
  std::optional<std::uint32_t> stored_epoch(const DevSecret* expected = nullptr) {
    EdgeDeviceState state;
    std::uint64_t generation = 0;
    EXPECT_TRUE(sqlite_->load(ratcheting_.credentials.dev_id, state, generation).ok());
    if (generation == kAbsentGeneration || !state.ratchet.active) return std::nullopt;
    if (expected != nullptr) {
      EXPECT_TRUE(constant_time_equal(state.ratchet.secret.view(), expected->view()));
    }
    return state.ratchet.epoch;
  }

  DevSecret flash_secret() {
    return flash_.read(device_credentials(ratcheting_)).dev_secret.clone();
  }

  std::uint64_t now_ms_ = kNowMs;
  /// One session: INIT at a new second, ACK, one DATA frame; the results of INIT and DATA.
  std::pair<HandleResult, HandleResult> session(ScriptedDevice& device) {
    now_ms_ += 1'000;
    HandleResult init = handshake(device, Encoding::compact, now_ms_);
    HandleResult data =
        deliver(kDataTopic, device.data(kReading, now_ms_, Encoding::compact), now_ms_ + 1);
    return {std::move(init), std::move(data)};
  }

  DeviceMaterial ratcheting_;
  dsekp::test::MemorySecretStore flash_;
  std::unique_ptr<DeviceRatchet> ratchet_;
};

TEST_F(RatchetServiceTest, TheDeviceAndTheStoredStateStepTogetherAcrossEdgeRestarts) {
  auto device = boot(41);
  for (std::uint32_t n = 1; n <= 4; ++n) {
    const auto [init, data] = session(*device);
    EXPECT_EQ(init.ratchet_steps, 0u);
    ASSERT_TRUE(data.ok()) << data.reason_name();
    EXPECT_TRUE(data.session_confirmed);
    EXPECT_TRUE(data.ratcheted);
    EXPECT_EQ(device->session().epoch(), n);
    const DevSecret now = flash_secret();
    EXPECT_EQ(stored_epoch(&now), std::optional<std::uint32_t>(n));
    start_edge();  // a restart between sessions: the edge has only what it stored
  }
  EXPECT_EQ(flash_.writes(), 4);
  // The registry still holds the provisioned secret; the state's is four steps past it.
  DeviceCredentials registered;
  ASSERT_TRUE(registry_->find("esp32-r", registered).ok());
  EXPECT_TRUE(registered.ratchet);
  EXPECT_FALSE(constant_time_equal(registered.dev_secret.view(), flash_secret().view()));
}

// The device stored the next secret and lost power before its first frame; the edge never saw
// a confirmation. The next INIT is one step ahead and the edge catches up; the device is never
// locked out.
TEST_F(RatchetServiceTest, ALostConfirmationIsCaughtUpByTheNextInit) {
  auto device = boot(42);
  (void)session(*device);  // both at epoch 1
  now_ms_ += 1'000;
  (void)handshake(*device, Encoding::compact, now_ms_);
  EXPECT_EQ(device->session().epoch(), 2u);
  EXPECT_EQ(stored_epoch(), std::optional<std::uint32_t>(1u));
  device = boot(43);  // power cut before the first frame of the session
  start_edge();
  const auto [init, data] = session(*device);
  EXPECT_EQ(init.ratchet_steps, 1u);
  ASSERT_TRUE(data.ok()) << data.reason_name();
  EXPECT_EQ(device->session().epoch(), 3u);
  const DevSecret now = flash_secret();
  EXPECT_EQ(stored_epoch(&now), std::optional<std::uint32_t>(3u));
}

// The edge dies (or its store fails) before the confirming frame's commit: nothing of the step
// is stored, the broker redelivers the frame, and the redelivery steps the secret once.
TEST_F(RatchetServiceTest, AConfirmationWhoseCommitFailedStepsOnceWhenHandledAgain) {
  auto device = boot(44);
  now_ms_ += 1'000;
  (void)handshake(*device, Encoding::compact, now_ms_);
  const Bytes frame = device->data(kReading, now_ms_, Encoding::compact);
  store_->fail_next_commits = 1;
  const HandleResult failed = deliver(kDataTopic, frame, now_ms_ + 1);
  EXPECT_FALSE(failed.processed());
  EXPECT_EQ(stored_epoch(), std::optional<std::uint32_t>(0u));
  start_edge();
  const HandleResult again = deliver(kDataTopic, frame, now_ms_ + 2);
  ASSERT_TRUE(again.ok()) << again.reason_name();
  EXPECT_TRUE(again.ratcheted);
  EXPECT_EQ(stored_epoch(), std::optional<std::uint32_t>(1u));
  // A later redelivery of the same frame is a replay and steps nothing.
  const HandleResult replay = deliver(kDataTopic, frame, now_ms_ + 3);
  EXPECT_EQ(std::string_view(replay.reason_name()), "replay");
  EXPECT_EQ(stored_epoch(), std::optional<std::uint32_t>(1u));
}

// An edge that lost the device's sessions but not its state's secret asks for a rekey under
// K_rekey of that secret; one under the registry's (provisioned) secret would be refused by the
// device once it has stepped.
TEST_F(RatchetServiceTest, ARekeyRequestIsProvenUnderTheStatesSecret) {
  auto device = boot(45);
  (void)session(*device);
  (void)session(*device);  // both at epoch 2
  EdgeDeviceState state;
  std::uint64_t generation = 0;
  ASSERT_TRUE(sqlite_->load(ratcheting_.credentials.dev_id, state, generation).ok());
  for (auto& s : state.established) s = EdgeSession{};
  state.established_count = 0;  // the sessions are gone, the secret is not
  ASSERT_TRUE(sqlite_->begin().ok());
  ASSERT_TRUE(sqlite_->save(ratcheting_.credentials.dev_id, state, now_ms_, generation).ok());
  ASSERT_TRUE(sqlite_->commit().ok());
  start_edge();

  const HandleResult r =
      deliver(kDataTopic, device->data(kReading, now_ms_ + 10, Encoding::compact), now_ms_ + 10);
  EXPECT_EQ(std::string_view(r.reason_name()), "unknown_session");
  ASSERT_TRUE(r.rekey_requested);
  RekeyFrame request;
  ASSERT_EQ(decode_rekey(r.publishes.at(0).payload, request), Error::ok);
  EXPECT_EQ(device->session().handle_rekey(request, 0), Error::ok);
  EXPECT_TRUE(device->session().rekey_due());
}

// A rotation gives the device a new provisioned secret: the old state, its secret included, is
// dropped and the re-provisioned device starts the ratchet over.
TEST_F(RatchetServiceTest, ARotationStartsTheRatchetOverFromTheNewSecret) {
  auto device = boot(46);
  (void)session(*device);
  ASSERT_TRUE(registry_->rotate("esp32-r", ratcheting_).ok());
  EXPECT_TRUE(ratcheting_.credentials.ratchet) << "a rotation keeps the mode";
  flash_ = dsekp::test::MemorySecretStore{};  // re-provisioned
  device = boot(47);
  const auto [init, data] = session(*device);
  EXPECT_TRUE(init.stale_state_dropped);
  EXPECT_EQ(init.ratchet_steps, 0u);
  ASSERT_TRUE(data.ok()) << data.reason_name();
  EXPECT_EQ(stored_epoch(), std::optional<std::uint32_t>(1u));
  // And rotating it out of ratchet mode makes it a v1 device again.
  ASSERT_TRUE(registry_->rotate("esp32-r", ratcheting_, {}, false).ok());
  ScriptedDevice v1(ratcheting_, 48);
  const auto [init_v1, data_v1] = session(v1);
  EXPECT_TRUE(init_v1.stale_state_dropped);
  ASSERT_TRUE(data_v1.ok()) << data_v1.reason_name();
  EXPECT_FALSE(data_v1.ratcheted);
  EXPECT_EQ(stored_epoch(), std::nullopt);
}

// A state restored from a copy three sessions old: the device is three steps past it, so a
// request under the state's secret alone would not reach it (it takes its own secret's or the
// one before). The edge sends one under every second secret of the look-ahead; exactly one is
// authentic to the device, which rekeys, and its next INIT catches the edge up.
TEST_F(RatchetServiceTest, ARekeyRequestReachesADeviceAheadOfARestoredState) {
  auto device = boot(52);
  (void)session(*device);  // both at epoch 1
  EdgeDeviceState old_state;
  std::uint64_t generation = 0;
  ASSERT_TRUE(sqlite_->load(ratcheting_.credentials.dev_id, old_state, generation).ok());
  for (int i = 0; i < 3; ++i) (void)session(*device);  // epoch 4
  EdgeDeviceState current;
  ASSERT_TRUE(sqlite_->load(ratcheting_.credentials.dev_id, current, generation).ok());
  ASSERT_TRUE(sqlite_->begin().ok());  // the restore
  ASSERT_TRUE(sqlite_->save(ratcheting_.credentials.dev_id, old_state, now_ms_, generation).ok());
  ASSERT_TRUE(sqlite_->commit().ok());
  start_edge();
  ASSERT_EQ(stored_epoch(), std::optional<std::uint32_t>(1u));

  const HandleResult r =
      deliver(kDataTopic, device->data(kReading, now_ms_ + 10, Encoding::compact), now_ms_ + 10);
  EXPECT_EQ(std::string_view(r.reason_name()), "unknown_session");
  ASSERT_TRUE(r.rekey_requested);
  EXPECT_EQ(r.publishes.size(), kMaxRekeyRequests);
  std::vector<Error> answers;
  for (const Publish& p : r.publishes) {
    RekeyFrame request;
    ASSERT_EQ(decode_rekey(p.payload, request), Error::ok);
    answers.push_back(device->session().handle_rekey(request, 0));
  }
  // Under S_1 (the state's: three steps behind, as a single request would be), then S_3 (the
  // one before the device's), then the rest after the device took one.
  EXPECT_EQ(answers.at(0), Error::bad_rekey_proof);
  EXPECT_EQ(answers.at(1), Error::ok);
  for (std::size_t i = 2; i < answers.size(); ++i) EXPECT_EQ(answers[i], Error::rate_limited) << i;
  EXPECT_TRUE(device->session().rekey_due());

  const auto [init, data] = session(*device);
  EXPECT_EQ(init.ratchet_steps, 3u) << "the INIT caught the edge up";
  ASSERT_TRUE(data.ok()) << data.reason_name();
  EXPECT_EQ(stored_epoch(), std::optional<std::uint32_t>(5u));
}

// The state lost altogether while the registry still holds the provisioned secret: the requests
// spread from that secret reach the device two steps past it, and its INIT gets it back in.
TEST_F(RatchetServiceTest, ARekeyRequestReachesADeviceWhoseStateWasLost) {
  auto device = boot(54);
  (void)session(*device);
  (void)session(*device);  // epoch 2
  ASSERT_TRUE(sqlite_->begin().ok());
  ASSERT_TRUE(sqlite_->remove(ratcheting_.credentials.dev_id).ok());
  ASSERT_TRUE(sqlite_->commit().ok());
  start_edge();
  const HandleResult r =
      deliver(kDataTopic, device->data(kReading, now_ms_ + 10, Encoding::compact), now_ms_ + 10);
  EXPECT_EQ(std::string_view(r.reason_name()), "unknown_session");
  ASSERT_EQ(r.publishes.size(), kMaxRekeyRequests);
  std::vector<Error> answers;
  for (const Publish& p : r.publishes) {
    RekeyFrame request;
    ASSERT_EQ(decode_rekey(p.payload, request), Error::ok);
    answers.push_back(device->session().handle_rekey(request, 0));
  }
  EXPECT_EQ(answers.at(0), Error::bad_rekey_proof) << "under the provisioned secret";
  EXPECT_EQ(answers.at(1), Error::ok) << "under S_2, the device's";
  const auto [init, data] = session(*device);
  EXPECT_EQ(init.ratchet_steps, 2u);
  ASSERT_TRUE(data.ok()) << data.reason_name();
  EXPECT_EQ(stored_epoch(), std::optional<std::uint32_t>(3u));
}

// Edge rule 1: once the stored state is past the provisioned secret, the committed result asks
// for the registry's copy to be erased (the daemon does it once the store is durable). After
// the erasure the device carries on from its state; without that state it is refused by name,
// not checked against a secret of zeros; a rotation provisions a secret the registry holds.
TEST_F(RatchetServiceTest, TheProvisionedSecretIsErasedOncePastAndWithoutAStateTheDeviceIsRefused) {
  auto device = boot(50);
  const std::uint64_t generation = ratcheting_.credentials.generation;
  auto [init, data] = session(*device);
  EXPECT_EQ(init.provisioned_secret_superseded, std::nullopt) << "the state is at epoch 0";
  ASSERT_TRUE(data.ok()) << data.reason_name();
  EXPECT_EQ(data.provisioned_secret_superseded, std::optional<std::uint64_t>(generation));

  bool erased = false;
  ASSERT_TRUE(registry_->erase_provisioned_secret("esp32-r", generation + 1, erased).ok());
  EXPECT_FALSE(erased) << "another generation's secret is not touched";
  ASSERT_TRUE(registry_
                  ->erase_provisioned_secret(material_.credentials.dev_id.str(),
                                             material_.credentials.generation, erased)
                  .ok());
  EXPECT_FALSE(erased) << "a v1 device has only its provisioned secret";
  ASSERT_TRUE(registry_->erase_provisioned_secret("esp32-r", generation, erased).ok());
  EXPECT_TRUE(erased);
  DeviceCredentials registered;
  ASSERT_TRUE(registry_->find("esp32-r", registered).ok());
  EXPECT_TRUE(registered.secret_erased);
  EXPECT_TRUE(constant_time_equal(registered.dev_secret.view(), DevSecret{}.view()));
  DeviceMaterial material;
  EXPECT_EQ(registry_->material("esp32-r", material).code(), RegistryErrc::secret_erased);

  std::tie(init, data) = session(*device);
  ASSERT_TRUE(data.ok()) << data.reason_name();
  EXPECT_EQ(data.provisioned_secret_superseded, std::nullopt) << "nothing left to erase";
  EXPECT_EQ(stored_epoch(), std::optional<std::uint32_t>(2u));

  // The state is lost (a store reset): nothing holds the device's secret any more.
  ASSERT_TRUE(sqlite_->begin().ok());
  ASSERT_TRUE(sqlite_->remove(ratcheting_.credentials.dev_id).ok());
  ASSERT_TRUE(sqlite_->commit().ok());
  now_ms_ += 1'000;
  const HandleResult refused =
      deliver(kInitTopic,
              device->init(Encoding::compact, static_cast<std::uint32_t>(now_ms_ / 1000)), now_ms_);
  EXPECT_EQ(refused.reason, EdgeReason::secret_erased);
  EXPECT_EQ(std::string(refused.reason_name()), "secret_erased");
  EXPECT_TRUE(refused.publishes.empty());

  ASSERT_TRUE(registry_->rotate("esp32-r", ratcheting_).ok());
  ASSERT_TRUE(registry_->find("esp32-r", registered).ok());
  EXPECT_FALSE(registered.secret_erased);
  flash_ = dsekp::test::MemorySecretStore{};
  device = boot(51);
  std::tie(init, data) = session(*device);
  ASSERT_TRUE(data.ok()) << data.reason_name();
  EXPECT_EQ(data.provisioned_secret_superseded,
            std::optional<std::uint64_t>(ratcheting_.credentials.generation));
}

// A v1 device of the same registry never steps and its state holds no secret.
TEST_F(RatchetServiceTest, AV1DeviceBesideItIsUnchanged) {
  ScriptedDevice v1(material_, 49);
  const auto [init, data] = session(v1);
  ASSERT_TRUE(data.ok()) << data.reason_name();
  EXPECT_FALSE(data.ratcheted);
  EdgeDeviceState state;
  std::uint64_t generation = 0;
  ASSERT_TRUE(sqlite_->load(material_.credentials.dev_id, state, generation).ok());
  EXPECT_FALSE(state.ratchet.active);
}

}  // namespace
}  // namespace dsekp::edge::testing
