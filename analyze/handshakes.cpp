// Multi-session trial summary (see handshakes.hpp).
#include "handshakes.hpp"

#include <algorithm>
#include <map>

namespace dsekp::analyze {

HandshakeSummary summarize_handshakes(std::span<const HandshakeLogData> logs) {
  HandshakeSummary s;
  std::map<std::string, DeviceHandshakes> devices;
  std::uint64_t attempts_total = 0;
  for (const auto& log : logs) {
    for (const auto& record : log.records) {
      DeviceHandshakes& device = devices[log.devices.at(record.device)];
      ++s.handshakes;
      ++device.handshakes;
      attempts_total += record.attempts;
      s.attempts_max = std::max(s.attempts_max, record.attempts);
      switch (record.outcome) {
        case HandshakeOutcome::ok:
          ++s.ok;
          ++device.ok;
          if (record.attempts == 1) ++s.ok_first_attempt;
          s.latencies_sorted.push_back(record.latency_ms);
          break;
        case HandshakeOutcome::timeout:
          ++s.timeout;
          ++device.timeout;
          break;
        case HandshakeOutcome::rejected:
          ++s.rejected;
          ++device.rejected;
          break;
      }
    }
  }
  if (s.handshakes > 0) {
    const auto n = static_cast<double>(s.handshakes);
    s.success_pct = 100.0 * static_cast<double>(s.ok) / n;
    s.first_attempt_success_pct = 100.0 * static_cast<double>(s.ok_first_attempt) / n;
    s.attempts_mean = static_cast<double>(attempts_total) / n;
  }
  std::sort(s.latencies_sorted.begin(), s.latencies_sorted.end());
  s.latency_ms = describe_sorted(s.latencies_sorted);
  s.devices = devices.size();
  std::uint64_t sessions = 0;
  for (auto& [dev_id, device] : devices) {
    device.dev_id = dev_id;
    sessions += device.ok;
    s.sessions_per_device_min = std::min(s.sessions_per_device_min.value_or(device.ok), device.ok);
    s.sessions_per_device_max = std::max(s.sessions_per_device_max.value_or(0), device.ok);
    s.per_device.push_back(device);
  }
  if (s.devices > 0)
    s.sessions_per_device_mean = static_cast<double>(sessions) / static_cast<double>(s.devices);
  return s;
}

}  // namespace dsekp::analyze
