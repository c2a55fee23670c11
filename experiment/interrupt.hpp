// Ctrl-C and SIGTERM for `dsekp experiment`: while an InterruptGuard lives, SIGINT, SIGTERM and
// SIGHUP only set a flag (the handler does nothing else: it must be async-signal-safe), and every
// wait loop of the experiment checks the flag and unwinds, stopping the children in order. The
// previous handlers come back when the guard ends.
#pragma once

#include <csignal>

namespace dsekp::experiment {

class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  /// The signal that asked us to stop, 0 if none yet.
  [[nodiscard]] static int signal_received() noexcept;
  [[nodiscard]] static bool requested() noexcept { return signal_received() != 0; }
  /// Clears the flag (tests).
  static void reset() noexcept;

 private:
  struct sigaction old_int_ {
  }, old_term_{}, old_hup_{};
};

/// Thrown by the experiment's wait loops when a signal asked it to stop.
struct Interrupted {
  int signal = 0;
};

/// Throws Interrupted if a signal arrived.
void throw_if_interrupted();

}  // namespace dsekp::experiment
