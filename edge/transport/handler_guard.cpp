// Handler timing and failure (see handler_guard.hpp).
#include "edge/transport/handler_guard.hpp"

#include <unistd.h>

#include <algorithm>

namespace dsekp::edge::transport {
namespace {

std::int64_t steady_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void fail_stop_on_handler_error(const FatalHandler& fatal, const std::string& why) noexcept {
  if (fatal) {
    try {
      fatal(why);
    } catch (...) {
    }
  }
  try {
    const std::string line = "dsekp: FATAL: " + why + "\n";
    (void)!::write(STDERR_FILENO, line.data(), line.size());
  } catch (...) {
  }
  ::_exit(70);
}

void HandlerClock::entered() noexcept {
  since_ns_.store(std::max<std::int64_t>(1, steady_ns()));
}

std::chrono::milliseconds HandlerClock::inside_for() const noexcept {
  const std::int64_t since = since_ns_.load();
  if (since == 0) return std::chrono::milliseconds(0);
  return std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::nanoseconds(std::max<std::int64_t>(0, steady_ns() - since)));
}

}  // namespace dsekp::edge::transport
