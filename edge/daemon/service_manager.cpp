// ServiceManager (see service_manager.hpp), over libsystemd's sd_notify.
#include "edge/daemon/service_manager.hpp"

#include <systemd/sd-daemon.h>

#include <algorithm>
#include <cstdint>

namespace dsekp::edge::daemon {
namespace {

// A STATUS= value is one line: a newline would start another assignment.
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

void notify(const std::string& assignments) {
  // 0: keep NOTIFY_SOCKET set, the main thread notifies again later. A failure (no socket, a
  // full one) cannot be helped and must not stop the edge.
  (void)sd_notify(0, assignments.c_str());
}

}  // namespace

ServiceManager::ServiceManager() {
  std::uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0)
    watchdog_ = std::chrono::microseconds(static_cast<std::int64_t>(usec));
}

void ServiceManager::ready(const std::string& status) const {
  notify("READY=1\nSTATUS=" + one_line(status));
}

void ServiceManager::status(const std::string& status) const {
  notify("STATUS=" + one_line(status));
}

void ServiceManager::reloading() const {
  notify("RELOADING=1\nSTATUS=reloading");
}

void ServiceManager::reloaded(const std::string& status) const {
  notify("READY=1\nSTATUS=" + one_line(status));
}

void ServiceManager::stopping() const {
  notify("STOPPING=1\nSTATUS=stopping");
}

std::chrono::milliseconds ServiceManager::check_period() const noexcept {
  if (!watchdog_) return std::chrono::milliseconds(0);
  return std::max(std::chrono::milliseconds(1),
                  std::chrono::duration_cast<std::chrono::milliseconds>(*watchdog_ / 2));
}

bool ServiceManager::loop_alive(std::chrono::milliseconds loop_stalled_for, bool waiting_for_store,
                                std::chrono::microseconds interval) noexcept {
  return waiting_for_store || loop_stalled_for < interval;
}

void ServiceManager::keep_alive(std::chrono::milliseconds loop_stalled_for,
                                bool waiting_for_store) const {
  if (watchdog_ && loop_alive(loop_stalled_for, waiting_for_store, *watchdog_))
    notify("WATCHDOG=1");
}

}  // namespace dsekp::edge::daemon
