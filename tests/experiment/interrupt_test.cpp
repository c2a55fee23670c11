// The experiment's signal flag (experiment/interrupt.hpp): SIGINT/SIGTERM set it, wait loops
// throw Interrupted, and the previous handlers return when the guard ends.
#include "experiment/interrupt.hpp"

#include <gtest/gtest.h>

namespace dsekp::experiment {
namespace {

volatile std::sig_atomic_t g_previous_called = 0;
extern "C" void previous_handler(int) {
  g_previous_called = 1;
}

TEST(Interrupt, SignalSetsTheFlagAndLoopsThrow) {
  InterruptGuard::reset();
  {
    InterruptGuard guard;
    EXPECT_FALSE(InterruptGuard::requested());
    EXPECT_NO_THROW(throw_if_interrupted());
    std::raise(SIGINT);  // would end the test process without the guard
    EXPECT_EQ(InterruptGuard::signal_received(), SIGINT);
    try {
      throw_if_interrupted();
      FAIL() << "expected Interrupted";
    } catch (const Interrupted& i) {
      EXPECT_EQ(i.signal, SIGINT);
    }
    std::raise(SIGTERM);  // the first signal is kept
    EXPECT_EQ(InterruptGuard::signal_received(), SIGINT);
  }
  InterruptGuard::reset();
}

TEST(Interrupt, PreviousHandlerIsRestored) {
  InterruptGuard::reset();
  struct sigaction mine {
  }, old{};
  mine.sa_handler = previous_handler;
  sigemptyset(&mine.sa_mask);
  ASSERT_EQ(::sigaction(SIGTERM, &mine, &old), 0);
  {
    InterruptGuard guard;
    std::raise(SIGTERM);
    EXPECT_EQ(g_previous_called, 0);
    EXPECT_EQ(InterruptGuard::signal_received(), SIGTERM);
  }
  std::raise(SIGTERM);
  EXPECT_EQ(g_previous_called, 1);
  ::sigaction(SIGTERM, &old, nullptr);
  InterruptGuard::reset();
}

}  // namespace
}  // namespace dsekp::experiment
