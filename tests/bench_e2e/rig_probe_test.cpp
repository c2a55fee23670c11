// The shared set-up (BenchRig: registry, private Mosquitto, `dsekp edge`, `dsekp device`) and the
// in-process handshake probe, on the real broker and the real edge binary:
//   * the probe completes every handshake against the edge, with microsecond latencies, and
//     refuses to run more handshakes than its identities allow;
//   * a fleet run through the rig is logged completely by the edge;
//   * without an edge the probe reports timeouts, and a refused login is a clear error.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "bench/e2e/bench_rig.hpp"
#include "bench/e2e/handshake_probe.hpp"
#include "bench/e2e/latency_join.hpp"
#include "device/credentials.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/temp_dir.hpp"

namespace {

using namespace dsekp::bench::e2e;
using dsekp::test::MosquittoBroker;
using dsekp::test::TempDir;
using namespace std::chrono_literals;

std::vector<dsekp::device::ProvisionedDevice> fake_identity(const std::string& user,
                                                            const std::string& password) {
  const std::string json = R"({"dev_id":"probe-x","dev_secret_hex":")" + std::string(64, 'a') +
                           R"(","edge_salt_hex":")" + std::string(32, 'b') +
                           R"(","psk_key_hex":")" + std::string(32, 'c') +
                           R"(","broker":{"username":")" + user + R"(","password":")" + password +
                           R"("}})";
  return dsekp::device::parse_credentials(json, "test");
}

TEST(RigAndProbe, ProbeHandshakesWithTheRealEdgeAndAFleetIsLoggedCompletely) {
  TempDir dir;
  RigOptions o;
  o.dir = dir.path() / "rig";
  o.dsekp_exe = ::dsekp::test::cli_path();
  BenchRig rig(o);
  rig.provision(5, 2);
  rig.start_broker();
  rig.start_edge({"--init-burst", "0", "--init-refill-ms", "0"});
  ASSERT_GT(rig.edge_pid(), 0);
  ASSERT_GT(rig.broker_pid(), 0);

  ProbeOptions po;
  po.host = rig.broker().host;
  po.port = rig.broker().port;
  HandshakeProbe probe(dsekp::device::load_credentials(rig.probe_credentials()), po);
  const ProbeResult r = probe.run(2 * kHandshakesPerIdentity - 5);
  EXPECT_EQ(r.attempted, 2 * kHandshakesPerIdentity - 5);
  EXPECT_EQ(r.ok, r.attempted);
  EXPECT_EQ(r.timeouts, 0u);
  ASSERT_EQ(r.latency_us.size(), r.ok);
  for (const double us : r.latency_us) {
    EXPECT_GT(us, 0.0);
    EXPECT_LT(us, 5e6);  // within the ACK timeout
  }
  // Two identities allow 60 handshakes per run; 55 are used.
  EXPECT_THROW((void)probe.run(6), std::invalid_argument);
  EXPECT_EQ(probe.run(5).ok, 5u);

  dsekp::experiment::DeviceCommand c;
  c.mode = "dsekp";
  c.devices = 5;
  c.count = 20;
  c.interval_ms = 10;
  rig.start_fleet(c, {});
  const FleetRun run = rig.finish_fleet(60s);
  EXPECT_EQ(run.exit_code, 0) << run.exit_text;
  EXPECT_TRUE(run.problems.empty()) << run.problems.front();
  EXPECT_EQ(run.edge_rows, 100u);
  ASSERT_TRUE(run.summary.is_object());
  EXPECT_EQ(run.summary["packets_acked"], 100);
  const JoinResult j = join_logs(rig.logs_dir() / "client_logs_dsekp.csv",
                                 rig.logs_dir() / "server_logs_dsekp.csv", dsekp::Mode::dsekp);
  EXPECT_EQ(j.sent, 100u);
  EXPECT_EQ(j.received, 100u);
  EXPECT_EQ(j.bad_rows, 0u);
  rig.stop_all();
  EXPECT_EQ(rig.edge_pid(), -1);
}

TEST(RigAndProbe, RefusesAFolderThatIsNotEmpty) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "used");
  { std::ofstream(dir.path() / "used" / "something") << "x"; }
  RigOptions o;
  o.dir = dir.path() / "used";
  o.dsekp_exe = ::dsekp::test::cli_path();
  try {
    BenchRig rig(o);
    FAIL() << "a non-empty folder was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not empty"), std::string::npos) << e.what();
  }
}

TEST(RigAndProbe, WithoutAnEdgeEveryHandshakeTimesOut) {
  TempDir dir;
  MosquittoBroker broker(dir.path().string(), "allow_anonymous true\n");
  ProbeOptions po;
  po.port = static_cast<std::uint16_t>(broker.port());
  po.ack_timeout = 200ms;
  HandshakeProbe probe(fake_identity("", ""), po);
  const ProbeResult r = probe.run(3);
  EXPECT_EQ(r.attempted, 3u);
  EXPECT_EQ(r.ok, 0u);
  EXPECT_EQ(r.timeouts, 3u);
  EXPECT_TRUE(r.latency_us.empty());
}

TEST(RigAndProbe, ARefusedLoginIsAClearError) {
  TempDir dir;
  MosquittoBroker broker(dir.path().string(), "allow_anonymous false\n");
  ProbeOptions po;
  po.port = static_cast<std::uint16_t>(broker.port());
  try {
    HandshakeProbe probe(fake_identity("probe-x", "wrong"), po);
    FAIL() << "a refused login was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("refused the login of probe-x"), std::string::npos)
        << e.what();
  }
}

}  // namespace
