// Delivery from the client (sent) and server (received) logs, matched on compact 64-bit packet
// keys (stream, sessctr, seq) that are sorted and merged: no strings or hash sets per packet.
// A stream is one device in one run, so a device's counters restarting in another run do not
// collide. Definitions (docs/LOGS.md):
//   sent        distinct keys in the client logs
//   received    distinct keys in both the client and the server logs
//   lost        sent - received
//   duplicates  server rows beyond the first of their key (the same packet logged again)
//   unexpected  distinct keys in the server logs that no client log has
//   delivery %  100 x received / sent
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace dsekp::analyze {

struct ReliabilityCounts {
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  std::uint64_t lost = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t unexpected = 0;
  std::uint64_t client_duplicate_rows = 0;  // client rows repeating a key (should be 0)
  std::uint64_t server_rows = 0;
  std::uint64_t sessions = 0;  // distinct (stream, sessctr) in either log
  std::optional<double> delivery_pct() const;
  void add(const ReliabilityCounts& other);
};

struct DeviceReliability {
  std::string dev_id;
  ReliabilityCounts counts;
};

struct Reliability {
  ReliabilityCounts total;
  std::vector<DeviceReliability> devices;  // by dev_id (runs summed), sorted by dev_id
};

/// `client_keys` and `server_keys` use stream indices (key bits 63..48) into `stream_devices`
/// (stream -> dev_id). Sorts both vectors in place.
Reliability compute_reliability(std::vector<std::uint64_t>& client_keys,
                                std::vector<std::uint64_t>& server_keys,
                                std::span<const std::string> stream_devices);

}  // namespace dsekp::analyze
