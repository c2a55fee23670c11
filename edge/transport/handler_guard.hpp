// What every transport does around the daemon's handlers, in one place: it times them for the
// watchdog (Transport::loop_stalled_for) and it ends the process when one throws, without another
// byte to the broker (the contract in transport.hpp: nothing of the burst may be acknowledged).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>

namespace dsekp::edge::transport {

/// Called with what a handler threw; must not return normally (the daemon's fail-stop).
using FatalHandler = std::function<void(const std::string& why)>;

/// Calls `fatal` (if set) with `why`, writes "dsekp: FATAL: <why>" to stderr and _exit(70)
/// (EX_SOFTWARE): no destructor runs that could write queued acknowledgements.
[[noreturn]] void fail_stop_on_handler_error(const FatalHandler& fatal,
                                             const std::string& why) noexcept;

/// Runs the handler call `body`; what it throws ends the process there
/// (fail_stop_on_handler_error with "exception in the MQTT <where> handler: ...").
template <typename Body>
void run_handler(const FatalHandler& fatal, const char* where, Body&& body) noexcept {
  try {
    body();
  } catch (const std::exception& e) {
    fail_stop_on_handler_error(
        fatal, std::string("exception in the MQTT ") + where + " handler: " + e.what());
  } catch (...) {
    fail_stop_on_handler_error(
        fatal, std::string("exception in the MQTT ") + where + " handler: unknown exception");
  }
}

/// How long the loop thread has been inside the handlers: entered()/left() on the loop thread,
/// inside_for() from any (the watchdog's thread).
class HandlerClock {
 public:
  void entered() noexcept;
  void left() noexcept { since_ns_.store(0); }
  [[nodiscard]] std::chrono::milliseconds inside_for() const noexcept;

 private:
  std::atomic<std::int64_t> since_ns_{0};  // steady_clock ns at entry; 0 outside the handlers
};

}  // namespace dsekp::edge::transport
