// The EdgeService test fixture: a real registry and a real SQLite session store in a temporary
// directory, the real core on OpenSSL, a recording sink, and an edge that can be restarted over
// the same files (destroying the service and its store is the restart).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>

#include "crypto/openssl/openssl_crypto.hpp"
#include "crypto/testing/seeded_rng.hpp"
#include "edge/registry/device_registry.hpp"
#include "edge/service/edge_service.hpp"
#include "edge/service/sqlite_credential_generations.hpp"
#include "edge/store/sqlite_session_store.hpp"
#include "test_doubles.hpp"
#include "tests/support/result_tally.hpp"
#include "tests/support/scripted_device.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge::testing {

inline constexpr std::string_view kInitTopic = "dsekp/init";
inline constexpr std::string_view kDataTopic = "dsekp/data";
inline constexpr std::string_view kPskTopic = "psk/data";
inline constexpr std::string_view kReading = R"({"t":24.0,"h":51.0})";

class EdgeServiceTest : public ::testing::Test {
 protected:
  EdgeServiceTest() {
    const RegistryStatus s =
        DeviceRegistry::open(dir_.file("registry.db"), OpenMode::create_if_missing, registry_);
    EXPECT_TRUE(s.ok()) << s.message();
    material_ = add_device("esp32-01");
    start_edge();
  }

  DeviceMaterial add_device(std::string_view dev_id) {
    DeviceMaterial material;
    const RegistryStatus s = registry_->add(dev_id, material);
    EXPECT_TRUE(s.ok()) << s.message();
    return material;
  }

  /// The configuration the tests start from: the defaults, with the PSK baseline on (the tests
  /// cover both modes).
  static EdgeServiceConfig test_config() {
    EdgeServiceConfig config;
    config.psk_enabled = true;
    return config;
  }

  /// (Re)starts the edge over the same database files with `config`.
  void start_edge(const EdgeServiceConfig& config = test_config()) {
    service_.reset();
    store_.reset();
    generations_.reset();
    sqlite_.reset();
    std::string error;
    sqlite_ = SqliteSessionStore::open(dir_.file("state.db"), {}, error);
    ASSERT_NE(sqlite_, nullptr) << error;
    generations_ = SqliteCredentialGenerations::open(*sqlite_, error);
    ASSERT_NE(generations_, nullptr) << error;
    store_ = std::make_unique<ScriptableStore>(*sqlite_);
    sink_.attach(sqlite_->connection());
    service_ = std::make_unique<EdgeService>(
        EdgeServiceParts{*registry_, *store_, *generations_, sink_, crypto_, rng_}, config);
    tally_ = {};
  }

  /// The service's handle() and send_downlink(), their results counted in tally_ (since the
  /// edge was last started).
  HandleResult deliver(std::string_view topic, const Bytes& payload,
                       std::uint64_t now_ms = kNowMs) {
    HandleResult r = service_->handle(topic, payload, now_ms);
    tally_.record(r);
    return r;
  }
  HandleResult send_downlink(std::string_view dev_id, ByteView plaintext, std::uint64_t now_ms) {
    HandleResult r = service_->send_downlink(dev_id, plaintext, now_ms);
    tally_.record(r);
    return r;
  }

  /// INIT -> ACK -> the device takes the ACK. Returns the INIT's result.
  HandleResult handshake(ScriptedDevice& device, Encoding enc, std::uint64_t now_ms = kNowMs) {
    HandleResult r =
        deliver(kInitTopic, device.init(enc, static_cast<std::uint32_t>(now_ms / 1000)), now_ms);
    EXPECT_TRUE(r.ok()) << r.reason_name();
    EXPECT_EQ(r.publishes.size(), 1u);
    if (r.publishes.size() == 1) {
      EXPECT_EQ(device.take_ack(r.publishes[0].payload), Error::ok);
    }
    return r;
  }

  /// A handshake confirmed by one DATA frame (seq 0), so downlink can use the session.
  void confirmed_session(ScriptedDevice& device, Encoding enc = Encoding::json) {
    handshake(device, enc);
    const HandleResult r = deliver(kDataTopic, device.data(kReading, kNowMs, enc), kNowMs + 5);
    EXPECT_TRUE(r.ok()) << r.reason_name();
    EXPECT_TRUE(r.session_confirmed);
  }

  /// Whether the store holds a state for `dev_id` (read past the service).
  bool has_state(const DevId& dev_id) {
    EdgeDeviceState state;
    std::uint64_t generation = 0;
    EXPECT_TRUE(sqlite_->load(dev_id, state, generation).ok());
    return generation != kAbsentGeneration;
  }

  /// Expects a protocol rejection named `name` that changed nothing and published nothing but,
  /// for unknown_session, a REKEY request (rekey_request_test.cpp looks at those).
  static void expect_rejected(const HandleResult& r, std::string_view name) {
    EXPECT_EQ(r.reason, EdgeReason::protocol_error) << r.reason_name();
    EXPECT_EQ(std::string_view(r.reason_name()), name);
    EXPECT_EQ(r.publishes.size(), r.rekey_requested ? 1u : 0u);
    EXPECT_TRUE(!r.rekey_requested || name == "unknown_session");
    EXPECT_FALSE(r.frame.has_value());
    EXPECT_TRUE(r.processed());
  }

  dsekp::test::TempDir dir_;
  std::unique_ptr<DeviceRegistry> registry_;
  DeviceMaterial material_;
  OpenSslCrypto crypto_;
  SeededRng rng_{7};
  RecordingSink sink_;
  std::unique_ptr<SqliteSessionStore> sqlite_;
  std::unique_ptr<SqliteCredentialGenerations> generations_;
  std::unique_ptr<ScriptableStore> store_;
  std::unique_ptr<EdgeService> service_;
  dsekp::test::ResultTally tally_;
};

}  // namespace dsekp::edge::testing
