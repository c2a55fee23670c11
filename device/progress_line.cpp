// The live progress line (see progress_line.hpp).
#include "device/progress_line.hpp"

#include <cstdio>

namespace dsekp::device {
namespace {

void format_duration(char* out, std::size_t size, double seconds) {
  if (seconds < 0 || seconds > 1e7) {
    std::snprintf(out, size, "--");
    return;
  }
  const auto s = static_cast<unsigned long long>(seconds + 0.5);
  if (s >= 3600) {
    std::snprintf(out, size, "%llu:%02llu:%02llu", s / 3600, s / 60 % 60, s % 60);
  } else {
    std::snprintf(out, size, "%llu:%02llu", s / 60, s % 60);
  }
}

}  // namespace

void ProgressLine::update(const FleetCounters& c, std::uint64_t connected,
                          std::uint64_t elapsed_ms) {
  if (!enabled_) return;
  if (elapsed_ms > last_ms_) {
    const double instant = static_cast<double>(c.packets_sent - last_sent_) * 1000.0 /
                           static_cast<double>(elapsed_ms - last_ms_);
    rate_ = last_ms_ == 0 ? instant : 0.7 * rate_ + 0.3 * instant;
  }
  last_sent_ = c.packets_sent;
  last_ms_ = elapsed_ms;
  char eta[32] = "--";
  if (duration_ms_ > 0) {
    format_duration(
        eta, sizeof eta,
        static_cast<double>(duration_ms_ > elapsed_ms ? duration_ms_ - elapsed_ms : 0) / 1000.0);
  } else if (expected_ > 0 && rate_ > 0) {
    const std::uint64_t left = expected_ > c.packets_sent ? expected_ - c.packets_sent : 0;
    format_duration(eta, sizeof eta, static_cast<double>(left) / rate_);
  }
  const unsigned long long errors =
      c.publish_errors + c.seal_errors + c.handshakes_timeout + c.handshakes_rejected;
  std::fprintf(stderr,
               "\r\x1b[K[dsekp device] connected %llu/%llu  sent %llu  acked %llu  errors %llu  "
               "%.0f msg/s  ETA %s",
               static_cast<unsigned long long>(connected),
               static_cast<unsigned long long>(devices_),
               static_cast<unsigned long long>(c.packets_sent),
               static_cast<unsigned long long>(c.packets_acked), errors, rate_, eta);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::finish() {
  if (drawn_) std::fputs("\r\x1b[K", stderr);
  drawn_ = false;
}

}  // namespace dsekp::device
