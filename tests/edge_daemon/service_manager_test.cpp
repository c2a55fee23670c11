// The edge under systemd's Type=notify (edge/daemon/service_manager.hpp): a real `dsekp edge`
// against a real Mosquitto, with NOTIFY_SOCKET pointing at a datagram socket the test reads, as
// systemd's would be. READY=1 after start-up, the STATUS once subscribed, WATCHDOG=1 every half
// interval, no keep-alive while the loop thread is held inside a message (--test-hold-ms), and
// RELOADING=1 / STOPPING=1 around SIGHUP and SIGTERM.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "edge/daemon/service_manager.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/daemon_test_support.hpp"
#include "tests/support/edge_runner.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/mqtt_test_client.hpp"
#include "tests/support/registry_bed.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge::testing {
namespace {

using daemon::ServiceManager;
using std::chrono::milliseconds;

TEST(ServiceManagerRule, TheLoopIsAliveUnlessStalledForAWholeIntervalOrWaitingForTheStore) {
  const std::chrono::microseconds interval(30'000'000);
  EXPECT_TRUE(ServiceManager::loop_alive(milliseconds(0), false, interval));
  EXPECT_TRUE(ServiceManager::loop_alive(milliseconds(29'999), false, interval));
  EXPECT_FALSE(ServiceManager::loop_alive(milliseconds(30'000), false, interval));
  // Failing closed on an unreachable store is on purpose: a restart would not help.
  EXPECT_TRUE(ServiceManager::loop_alive(milliseconds(600'000), true, interval));
}

TEST(ServiceManagerRule, WithoutSystemdThereIsNoWatchdog) {
  ::unsetenv("WATCHDOG_USEC");
  const ServiceManager manager;
  EXPECT_FALSE(manager.watchdog_interval().has_value());
  EXPECT_EQ(manager.check_period(), milliseconds(0));
}

/// What systemd's notify socket would receive, each datagram with its arrival time.
class NotifySocket {
 public:
  explicit NotifySocket(const std::string& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    path.copy(addr.sun_path, sizeof addr.sun_path - 1);
    bound_ = fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~NotifySocket() {
    if (fd_ >= 0) ::close(fd_);
    std::filesystem::remove(path_);
  }
  [[nodiscard]] bool bound() const { return bound_; }

  struct Datagram {
    Clock::time_point at;
    std::string text;
  };
  /// Reads what arrives for `duration`.
  void collect(milliseconds duration) {
    const auto end = Clock::now() + duration;
    while (Clock::now() < end) {
      pollfd p{fd_, POLLIN, 0};
      const auto left = std::chrono::duration_cast<milliseconds>(end - Clock::now());
      if (::poll(&p, 1, static_cast<int>(std::max<long>(1, left.count()))) <= 0) continue;
      char buf[512];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n > 0) received.push_back({Clock::now(), std::string(buf, static_cast<std::size_t>(n))});
    }
  }
  /// Collects until a datagram containing `part` arrived (at most `timeout`).
  bool wait_for(const std::string& part, milliseconds timeout) {
    const auto end = Clock::now() + timeout;
    while (Clock::now() < end) {
      for (const auto& d : received)
        if (d.text.find(part) != std::string::npos) return true;
      collect(milliseconds(50));
    }
    return false;
  }
  [[nodiscard]] std::vector<Clock::time_point> pings_between(Clock::time_point from,
                                                             Clock::time_point to) const {
    std::vector<Clock::time_point> out;
    for (const auto& d : received)
      if (d.text == "WATCHDOG=1" && d.at >= from && d.at <= to) out.push_back(d.at);
    return out;
  }
  std::vector<Datagram> received;

 private:
  std::string path_;
  int fd_ = -1;
  bool bound_ = false;
};

TEST(ServiceManagerDaemon, NotifiesReadinessStatusWatchdogReloadAndStop) {
  dsekp::test::TempDir dir;
  DeviceMaterial material;
  const std::string registry = dir.file("registry.db");
  ASSERT_TRUE(register_device(registry, "esp32-01", material));
  std::filesystem::create_directories(dir.file("broker"));
  dsekp::test::MosquittoBroker broker(dir.file("broker"), "allow_anonymous true\n");
  const std::string config = dir.file("edge.toml");
  std::ofstream(config) << "max_skew = 300\n";

  NotifySocket notify(dir.file("notify.sock"));
  ASSERT_TRUE(notify.bound());
  ::setenv("NOTIFY_SOCKET", dir.file("notify.sock").c_str(), 1);
  ::setenv("WATCHDOG_USEC", "400000", 1);  // a keep-alive every 200 ms
  // A hold of 2 s at each moment of a message: the loop thread stalls inside its handlers.
  EdgeRunner edge(dir,
                  {::dsekp::test::cli_path(), "edge", "--config", config, "--broker",
                   "127.0.0.1:" + std::to_string(broker.port()), "--db", registry, "--logs-dir",
                   dir.file("logs"), "--metrics", "off", "--test-hold-ms", "2000"});
  const auto started = edge.start();
  ::unsetenv("NOTIFY_SOCKET");
  ::unsetenv("WATCHDOG_USEC");
  ASSERT_TRUE(started);

  ASSERT_TRUE(notify.wait_for("READY=1", milliseconds(5000))) << edge.stderr_text();
  ASSERT_TRUE(notify.wait_for("STATUS=serving: subscribed on 127.0.0.1:", milliseconds(5000)));
  EXPECT_NE(notify.received.front().text.find("STATUS=connecting to 127.0.0.1:"), std::string::npos)
      << notify.received.front().text;
  notify.collect(milliseconds(1000));
  const auto idle_from = Clock::now() - milliseconds(1000);
  EXPECT_GE(notify.pings_between(idle_from, Clock::now()).size(), 3u) << "pings while idle";

  // One message: the loop holds 2 s before handling it and 2 s at the batch end.
  dsekp::test::MqttTestClient client("prober");
  ASSERT_EQ(client.connect(broker.port(), "", ""), std::optional<int>(0));
  ASSERT_TRUE(client.publish("dsekp/data", "not a frame"));
  ASSERT_TRUE(
      wait_until([&] { return edge.stderr_text().find("test hold: before") != std::string::npos; },
                 std::chrono::seconds(5)));
  const auto held = Clock::now();
  notify.collect(milliseconds(1500));
  // Pings sent before the check saw the stall (at most one period plus the interval) aside,
  // none while the loop is held.
  EXPECT_TRUE(notify.pings_between(held + milliseconds(700), Clock::now()).empty())
      << "the watchdog was fed while the loop thread was stuck in a message";
  ASSERT_TRUE(
      wait_until([&] { return edge.stderr_text().find("test hold: after") != std::string::npos; },
                 std::chrono::seconds(5)));
  notify.collect(milliseconds(3000));  // the second hold ends, then the pings resume
  EXPECT_GE(notify.pings_between(Clock::now() - milliseconds(800), Clock::now()).size(), 2u)
      << "no keep-alive after the hold";

  edge.signal(SIGHUP);
  EXPECT_TRUE(notify.wait_for("RELOADING=1", milliseconds(5000)));
  EXPECT_TRUE(notify.wait_for("STATUS=reloaded", milliseconds(5000)));
  EXPECT_EQ(edge.terminate(), std::optional<int>(0)) << edge.stderr_text();
  EXPECT_TRUE(notify.wait_for("STOPPING=1", milliseconds(2000)));
}

}  // namespace
}  // namespace dsekp::edge::testing
