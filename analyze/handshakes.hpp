// Multi-session trials (DSEKP only; client_handshakes_dsekp.csv, our addition to the paper's
// logs): how many handshakes, how many ended INIT -> ACK successfully, how long they took and how
// sessions spread over devices. The paper's section 5.6 reports these only in prose (every re-
// initialisation succeeded in a single INIT -> ACK, 185 ms on average).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "log_files.hpp"
#include "statistics.hpp"

namespace dsekp::analyze {

struct DeviceHandshakes {
  std::string dev_id;
  std::uint64_t handshakes = 0;
  std::uint64_t ok = 0;
  std::uint64_t timeout = 0;
  std::uint64_t rejected = 0;
};

struct HandshakeSummary {
  std::uint64_t handshakes = 0;
  std::uint64_t ok = 0;
  std::uint64_t timeout = 0;
  std::uint64_t rejected = 0;
  std::optional<double> success_pct;                // 100 x ok / handshakes
  std::uint64_t ok_first_attempt = 0;               // ok with attempts == 1
  std::optional<double> first_attempt_success_pct;  // 100 x ok_first_attempt / handshakes
  std::optional<double> attempts_mean;
  std::uint32_t attempts_max = 0;
  Descriptive latency_ms;                // ack_recv_ms - init_sent_ms over ok handshakes
  std::vector<double> latencies_sorted;  // same values, ascending (figure)
  // Sessions (ok handshakes) per device, over devices that appear in the log.
  std::uint64_t devices = 0;
  std::optional<double> sessions_per_device_mean;
  std::optional<std::uint64_t> sessions_per_device_min;
  std::optional<std::uint64_t> sessions_per_device_max;
  std::vector<DeviceHandshakes> per_device;  // sorted by dev_id
};

/// Summarises any number of handshake logs; devices are matched by dev_id across files.
HandshakeSummary summarize_handshakes(std::span<const HandshakeLogData> logs);

}  // namespace dsekp::analyze
