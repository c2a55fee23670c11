// Network faults between the devices and the broker, through the link emulator (linkemu/, the
// library behind `dsekp link`) run in this process: a fleet of 10 `dsekp device`s connects to the
// emulator, which relays to a real Mosquitto; the real edge talks to the broker directly. While
// the devices stream DATA at QoS 1 the link goes through, in order:
//   1. delay 20 ms with 10 ms jitter (kept for the whole run as the base link);
//   2. stalls: 5 % of the chunks freeze their connection for 300 ms, for 2 s;
//   3. dropped connections: every connection reset (RST) at once;
//   4. half-open connections: every connection blackholed (nothing relayed, sockets left open);
//      the devices find out through their MQTT keepalive (5 s, libmosquitto's minimum) and
//      reconnect;
//   5. a partition: every connection reset and every new one reset on its first bytes
//      (drop=100%, drop_mode=rst) for 5 s, so that the devices' reconnection attempts fail
//      during it (backoff 1 s, 2 s, ...); then the base link. (A blackholed partition shorter
//      than about two keepalives looks to a device exactly like case 4: libmosquitto notices a
//      silent connection only after a PINGREQ goes unanswered for another keepalive.)
// After each of 3-5 the test waits until frames flow again. Asserted: the fleet ends with every
// frame acknowledged, and every frame the devices logged as sent is in the edge's server CSV and
// telemetry table exactly once (QoS 1 resends after a reconnect that the broker already had are
// refused by the edge's replay window, not stored twice).
#include <chrono>
#include <iostream>

#include "fault_bed.hpp"
#include "linkemu/link_emulator.hpp"
#include "tests/support/mosquitto_broker.hpp"

namespace dsekp::faults {
namespace {

using linkemu::DropMode;
using linkemu::LinkEmulator;
using linkemu::LinkSpec;
using linkemu::parse_link_spec;

LinkSpec spec(const std::string& text) {
  const auto r = parse_link_spec(text);
  if (!r.ok()) throw std::invalid_argument(text + ": " + r.error);
  return *r.spec;
}

class NetworkFaults : public FaultBed {
 protected:
  void TearDown() override {
    if (HasFailure() && broker_) std::cerr << "mosquitto:\n" << broker_->log();
    FaultBed::TearDown();
    if (link_) link_->stop();
    broker_.reset();
  }

  /// Waits until the edge has stored `more` frames beyond what it has now; the time it took.
  std::optional<double> wait_for_flow(std::int64_t more, std::chrono::seconds timeout) {
    const auto start = Clock::now();
    const std::int64_t target = telemetry_count() + more;
    if (!wait_until([&] { return telemetry_count() >= target; }, timeout)) return std::nullopt;
    return std::chrono::duration<double>(Clock::now() - start).count();
  }

  std::unique_ptr<dsekp::test::MosquittoBroker> broker_;
  std::unique_ptr<LinkEmulator> link_;
};

TEST_F(NetworkFaults, QosOneFramesArriveExactlyOnceThroughDelayStallsDropsAndAPartition) {
  constexpr int kDevices = 10;
  provision(kDevices);
  std::filesystem::create_directories(dir_.file("broker"));
  broker_ =
      std::make_unique<dsekp::test::MosquittoBroker>(dir_.file("broker"), "allow_anonymous true\n");
  start_edge("127.0.0.1:" + std::to_string(broker_->port()));
  ASSERT_FALSE(HasFatalFailure());

  const LinkSpec base = spec("delay=20ms,jitter=10ms");
  link_ = std::make_unique<LinkEmulator>(base, 7);
  std::string error;
  const std::uint16_t link_port =
      link_->start("127.0.0.1", 0, "127.0.0.1", static_cast<std::uint16_t>(broker_->port()), error);
  ASSERT_NE(link_port, 0) << error;
  start_fleet("127.0.0.1:" + std::to_string(link_port),
              {"--count", "250", "--interval-ms", "100", "--qos", "1", "--keepalive-s", "5",
               "--give-up-s", "60", "--drain-timeout-ms", "20000"});

  // 1. Delay and jitter: every device completes its handshake and frames flow.
  ASSERT_TRUE(wait_for_flow(10 * kDevices, std::chrono::seconds(20)))
      << "no frames through the delayed link";
  std::map<std::string, std::optional<double>> recovery;

  // 2. Stalls.
  link_->set_spec(spec("delay=20ms,jitter=10ms,stall=5%,stall_time=300ms"));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  link_->set_spec(base);
  recovery["stalls"] = wait_for_flow(kDevices, std::chrono::seconds(15));

  // 3. Every connection reset.
  link_->cut_connections(DropMode::rst);
  recovery["rst"] = wait_for_flow(2 * kDevices, std::chrono::seconds(20));

  // 4. Half-open: nothing relayed, nobody told.
  link_->cut_connections(DropMode::blackhole);
  recovery["half-open"] = wait_for_flow(2 * kDevices, std::chrono::seconds(30));

  // 5. Partition: old and new connections reset for 5 s.
  ASSERT_TRUE(fleet_->running()) << "the fleet ended before the partition; raise --count";
  link_->set_spec(spec("delay=20ms,jitter=10ms,drop=100%,drop_mode=rst"));
  link_->cut_connections(DropMode::rst);
  std::this_thread::sleep_for(std::chrono::seconds(5));
  link_->set_spec(base);
  recovery["partition"] = wait_for_flow(2 * kDevices, std::chrono::seconds(40));

  const auto code = wait_fleet(std::chrono::seconds(90));
  EXPECT_EQ(code, std::optional<int>(0)) << dsekp::test::read_file(dir_.file("device.err"));
  const nlohmann::json s = summary();
  EXPECT_EQ(s.value("packets_acked", -1), s.value("packets_sent", -2));
  EXPECT_EQ(s.value("packets_sent", 0), 250 * kDevices);
  // rst, half-open and partition each cut every device once (a device caught while connecting
  // counts a connect failure instead of a disconnect).
  EXPECT_GE(s.value("disconnects", 0) + s.value("connect_failures", 0), 3 * kDevices);
  const Ledger l = settle_and_compare();
  EXPECT_TRUE(l.exactly_once()) << l.describe();
  EXPECT_EQ(l.sent, static_cast<std::size_t>(250 * kDevices));

  link_->stop();
  const linkemu::LinkStats st = link_->stats();
  // Frames the devices wrote into blackholed connections were discarded by the link and still
  // arrived: the MQTT client resent them after reconnecting.
  EXPECT_GT(st.bytes_discarded[0], 0u);
  // Reconnection attempts met the partition and were refused (observed: 10 to 18 for the 10
  // devices; not asserted per device, as a device still backing off from case 4 may not try).
  EXPECT_GT(st.drops, 0u);
  EXPECT_GT(s.value("connect_failures", 0), 0);
  // Resent frames the broker had already passed on: refused by the edge's replay window.
  const double replays = metric_value(final_metrics_, "dsekp_rejections_total{reason=\"replay\"}");
  std::cout << "[ FIGURE ] network faults: " << l.describe() << "; device disconnects "
            << s.value("disconnects", 0) << ", connect failures " << s.value("connect_failures", 0)
            << "; link accepted " << st.connections_accepted << " connections, cuts " << st.cuts
            << ", stalls " << st.stalls << ", drops " << st.drops << ", device bytes discarded "
            << st.bytes_discarded[0] << "; flow again after";
  for (const auto& [phase, seconds] : recovery)
    std::cout << " " << phase << " "
              << (seconds ? std::to_string(*seconds).substr(0, 4) + " s" : std::string("NEVER"));
  std::cout << "; redeliveries refused as replay " << replays << "\n";
  for (const auto& [phase, seconds] : recovery)
    EXPECT_TRUE(seconds.has_value()) << "frames did not flow again after " << phase;
}

}  // namespace
}  // namespace dsekp::faults
