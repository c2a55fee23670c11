// ServiceManager: what the edge tells systemd when it runs as a Type=notify unit (the package's
// dsekp-edge.service): READY=1 once it serves, a STATUS= line an operator sees in
// `systemctl status`, RELOADING=1/STOPPING=1 around SIGHUP and shutdown, and the watchdog
// keep-alive. Outside systemd (no NOTIFY_SOCKET in the environment) every call does nothing.
//
// The watchdog proves that the loop thread is not stuck inside a message or a commit: the main
// thread pings only while `loop_stalled_for` is below the interval. A pause on an unreachable
// shared store is the edge failing closed on purpose (a restart cannot help it), not a hang, so it
// does not stop the pings either.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace dsekp::edge::daemon {

class ServiceManager {
 public:
  /// Reads the watchdog interval systemd set (WATCHDOG_USEC, for this pid), if any.
  ServiceManager();

  void ready(const std::string& status) const;
  void status(const std::string& status) const;
  void reloading() const;
  void reloaded(const std::string& status) const;
  void stopping() const;

  /// The unit's WatchdogSec=, when systemd expects keep-alives from this process.
  [[nodiscard]] std::optional<std::chrono::microseconds> watchdog_interval() const noexcept {
    return watchdog_;
  }
  /// How often the main thread should look: half the interval, as sd_watchdog_enabled(3) advises.
  [[nodiscard]] std::chrono::milliseconds check_period() const noexcept;
  /// Sends WATCHDOG=1 if the loop thread is alive: not stalled in one message or commit for a
  /// whole interval, or waiting on purpose for an unreachable store.
  void keep_alive(std::chrono::milliseconds loop_stalled_for, bool waiting_for_store) const;

  /// The rule keep_alive applies, on its own for the tests.
  [[nodiscard]] static bool loop_alive(std::chrono::milliseconds loop_stalled_for,
                                       bool waiting_for_store,
                                       std::chrono::microseconds interval) noexcept;

 private:
  std::optional<std::chrono::microseconds> watchdog_;
};

}  // namespace dsekp::edge::daemon
