// The live edge every hostile-input test attacks: a real Mosquitto on a free loopback port (open
// to anonymous clients, so the attacker may publish anywhere, ACK topics included, and with an
// unbounded queue so the broker never drops a QoS 1 message on its own), a registry of devices,
// and the real `dsekp edge` binary as a child process with its /metrics endpoint. Plus the
// legitimate devices that stream while the attacker works (Streamer), and the checks every test
// ends with: exact rejection deltas from the real /metrics, every legitimate frame in telemetry
// and the CSV log exactly once, the edge alive and healthy.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "async_mqtt_client.hpp"
#include "hostile_device.hpp"
#include "tests/support/edge_runner.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/mqtt_test_client.hpp"
#include "tests/support/on_each_mqtt_client.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::hostile {

using Metrics = std::map<std::string, double>;  // series (name{labels}) -> value

inline std::uint64_t unix_ms() {
  return edge::testing::unix_ms_now();
}
inline std::uint32_t unix_s() {
  return static_cast<std::uint32_t>(unix_ms() / 1000);
}

// The edge under test is built like the tests. Under AddressSanitizer (`make test-sanitize`) freed
// memory is held in ASan's quarantine (256 MB by default) instead of being reused, so the edge's
// RSS grows with every allocation however bounded its live memory is (+94 MB over the flood test,
// measured); LeakSanitizer checks for leaks there instead. A bound on RSS growth then only
// catches growth beyond the quarantine.
#if defined(__SANITIZE_ADDRESS__)
#define DSEKP_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DSEKP_UNDER_ASAN 1
#endif
#endif
/// `normal_kb`, or the quarantine's 512 MiB under AddressSanitizer.
constexpr long rss_growth_bound_kb(long normal_kb) {
#ifdef DSEKP_UNDER_ASAN
  (void)normal_kb;
  return 512 * 1024;
#else
  return normal_kb;
#endif
}

/// The series name of one rejection reason, e.g. dsekp_rejections_total{reason="replay"}.
std::string rejection(const std::string& reason);
/// Prometheus text -> series values (comments skipped).
Metrics parse_metrics(const std::string& text);
/// One HTTP/1.0 GET on loopback (tests/edge_daemon/daemon_test_support.hpp).
using edge::testing::http_get;

/// The tests that reach the edge's MQTT transport run on each client (on_each_mqtt_client.hpp).
using ::dsekp::test::OnEachMqttClient;

class Bed {
 public:
  /// Registers `dev_ids` in a new registry; `edge_args` are added to the edge's command line.
  explicit Bed(const std::vector<std::string>& dev_ids, std::vector<std::string> edge_args = {});
  ~Bed();

  /// Starts the broker and the edge; waits for the edge's ready file and metrics endpoint.
  ::testing::AssertionResult start();
  /// SIGTERM (must exit 0), then starts the edge again on the same state.
  ::testing::AssertionResult restart();

  [[nodiscard]] const edge::DeviceMaterial& material(const std::string& dev_id) const;
  [[nodiscard]] int port() const { return broker_->port(); }
  [[nodiscard]] std::string registry_path() const { return dir_.file("registry.db"); }
  [[nodiscard]] pid_t edge_pid() const { return pid_; }
  [[nodiscard]] std::string edge_stderr() const { return edge_->all_stderr(); }

  [[nodiscard]] Metrics metrics() const;
  /// GET /healthz answers 200.
  [[nodiscard]] bool healthy() const;
  /// The edge process is running (not a zombie): /proc/PID/stat state is not Z or X.
  [[nodiscard]] bool alive() const;
  /// VmRSS of the edge, kB (-1 if unreadable).
  [[nodiscard]] long rss_kb() const;

  /// Waits until dsekp_rejections_total summed over reasons is at least `before`'s + `n`.
  ::testing::AssertionResult wait_rejections(
      const Metrics& before, double n,
      std::chrono::seconds timeout = std::chrono::seconds(20)) const;
  /// Waits until `series` is at least `value`.
  ::testing::AssertionResult wait_metric(
      const std::string& series, double value,
      std::chrono::seconds timeout = std::chrono::seconds(20)) const;

  /// The dev_id's readings in the telemetry table / the server CSV log, each with its count.
  [[nodiscard]] std::map<std::string, int> telemetry(const std::string& dev_id) const;
  [[nodiscard]] std::map<std::string, int> csv(const std::string& dev_id) const;

 private:
  ::testing::AssertionResult after_start();

  dsekp::test::TempDir dir_;
  std::map<std::string, edge::DeviceMaterial> materials_;
  std::unique_ptr<dsekp::test::MosquittoBroker> broker_;
  std::unique_ptr<edge::testing::EdgeRunner> edge_;
  std::vector<std::string> edge_args_;
  pid_t pid_ = -1;
  int metrics_port_ = -1;
};

/// Every dsekp_rejections_total{reason} series changed from `before` to `after` by exactly the
/// given amount (0 for a reason not listed): no hostile message slipped into another reason.
::testing::AssertionResult rejection_deltas_are(const Metrics& before, const Metrics& after,
                                                const std::map<std::string, double>& expected);
/// `after[series] - before[series]`.
double delta(const Metrics& before, const Metrics& after, const std::string& series);

/// A legitimate device: one handshake, then DATA frames at QoS 1 (both encodings) on its own
/// thread and MQTT connection until stop(), each reading unique. It never starts another
/// handshake, so each of its frames is accepted only if its first session stays established.
class Streamer {
 public:
  Streamer(const edge::DeviceMaterial& material, std::uint64_t seed, int port);
  ~Streamer();
  /// The handshake (INIT at device time `t`), from the calling thread.
  ::testing::AssertionResult handshake(std::uint32_t t);
  void start();
  /// Stops and joins the thread; the readings sent (each acknowledged by the broker).
  std::vector<std::string> stop();
  [[nodiscard]] std::string dev_id() const { return device_.dev_id(); }
  [[nodiscard]] std::size_t sent_count() const { return sent_count_.load(); }
  [[nodiscard]] bool failed() const { return failed_.load(); }
  /// ACK messages the device received in all (1: it never needed another handshake).
  [[nodiscard]] std::size_t acks_received() const;

  static constexpr int kMaxFrames = 4000;  // bounds the loop whatever happens

 private:
  HostileDevice device_;
  dsekp::test::MqttTestClient client_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> failed_{false};
  std::atomic<std::size_t> sent_count_{0};
  std::vector<std::string> sent_;
};

/// Three (or more) streamers with their handshakes done and their threads running.
::testing::AssertionResult start_streamers(Bed& bed, const std::vector<std::string>& dev_ids,
                                           std::vector<std::unique_ptr<Streamer>>& out,
                                           std::uint32_t t = 0);

/// Stops the streamers and checks that each reading each sent is in the edge's telemetry table
/// and server CSV log exactly once, that nothing else is stored under their dev_ids, and that
/// none needed a second handshake.
void expect_streamers_lost_nothing(Bed& bed, std::vector<std::unique_ptr<Streamer>>& streamers);

/// A device's handshake over `link`, a connection subscribed to the device's ACK topic: publishes
/// `init`, waits for the next ACK there and feeds it to the device; `ack` receives it.
::testing::AssertionResult handshake_over(AsyncMqttClient& link, HostileDevice& device,
                                          const std::string& init, std::string* ack = nullptr);

/// Publishes `frames` over `link` and waits until the device has `stored` readings in telemetry.
::testing::AssertionResult send_and_wait(Bed& bed, AsyncMqttClient& link, const std::string& dev_id,
                                         const std::vector<std::string>& frames,
                                         std::size_t stored);

/// The edge is still running and /healthz answers 200.
void expect_edge_healthy(const Bed& bed);

}  // namespace dsekp::hostile
