// Signal flag for the experiment's wait loops (see interrupt.hpp).
#include "interrupt.hpp"

namespace dsekp::experiment {
namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_stop_signal(int sig) {
  if (g_signal == 0) g_signal = sig;
}

}  // namespace

InterruptGuard::InterruptGuard() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocking call returns EINTR and its loop checks the flag
  ::sigaction(SIGINT, &sa, &old_int_);
  ::sigaction(SIGTERM, &sa, &old_term_);
  ::sigaction(SIGHUP, &sa, &old_hup_);
}

InterruptGuard::~InterruptGuard() {
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
  ::sigaction(SIGHUP, &old_hup_, nullptr);
}

int InterruptGuard::signal_received() noexcept {
  return g_signal;
}

void InterruptGuard::reset() noexcept {
  g_signal = 0;
}

void throw_if_interrupted() {
  if (const int sig = InterruptGuard::signal_received(); sig != 0) throw Interrupted{sig};
}

}  // namespace dsekp::experiment
