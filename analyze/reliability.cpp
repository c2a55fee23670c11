// Sort-and-merge delivery counting (see reliability.hpp).
#include "reliability.hpp"

#include <algorithm>
#include <map>

#include "log_files.hpp"

namespace dsekp::analyze {

std::optional<double> ReliabilityCounts::delivery_pct() const {
  if (sent == 0) return std::nullopt;
  return 100.0 * static_cast<double>(received) / static_cast<double>(sent);
}

void ReliabilityCounts::add(const ReliabilityCounts& o) {
  sent += o.sent;
  received += o.received;
  lost += o.lost;
  duplicates += o.duplicates;
  unexpected += o.unexpected;
  client_duplicate_rows += o.client_duplicate_rows;
  server_rows += o.server_rows;
  sessions += o.sessions;
}

Reliability compute_reliability(std::vector<std::uint64_t>& client_keys,
                                std::vector<std::uint64_t>& server_keys,
                                std::span<const std::string> stream_devices) {
  std::sort(client_keys.begin(), client_keys.end());
  std::sort(server_keys.begin(), server_keys.end());
  std::vector<ReliabilityCounts> streams(stream_devices.size());
  std::size_t c = 0;
  std::size_t s = 0;
  std::uint64_t last_session = UINT64_MAX;
  while (c < client_keys.size() || s < server_keys.size()) {
    std::uint64_t key = 0;
    if (c == client_keys.size()) {
      key = server_keys[s];
    } else if (s == server_keys.size()) {
      key = client_keys[c];
    } else {
      key = std::min(client_keys[c], server_keys[s]);
    }
    std::uint64_t in_client = 0;
    while (c < client_keys.size() && client_keys[c] == key) ++c, ++in_client;
    std::uint64_t in_server = 0;
    while (s < server_keys.size() && server_keys[s] == key) ++s, ++in_server;

    ReliabilityCounts& counts = streams.at(key_device(key));
    // Keys are visited in order, so a session's keys are consecutive: (stream, sessctr) = key
    // >> 32.
    if ((key >> 32) != last_session) {
      last_session = key >> 32;
      ++counts.sessions;
    }
    counts.server_rows += in_server;
    if (in_server > 1) counts.duplicates += in_server - 1;
    if (in_client > 0) {
      ++counts.sent;
      counts.client_duplicate_rows += in_client - 1;
      if (in_server > 0) {
        ++counts.received;
      } else {
        ++counts.lost;
      }
    } else {
      ++counts.unexpected;
    }
  }

  Reliability result;
  std::map<std::string, ReliabilityCounts> by_device;
  for (std::size_t i = 0; i < streams.size(); ++i) {
    by_device[stream_devices[i]].add(streams[i]);
    result.total.add(streams[i]);
  }
  for (auto& [dev_id, counts] : by_device) result.devices.push_back({dev_id, counts});
  return result;
}

}  // namespace dsekp::analyze
