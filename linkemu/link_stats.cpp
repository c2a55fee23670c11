// JSON form of LinkStats (see link_stats.hpp).
#include "linkemu/link_stats.hpp"

#include <nlohmann/json.hpp>

namespace dsekp::linkemu {

std::string link_stats_json(const LinkStats& s, const std::string& spec) {
  // Keys in the order of LinkStats, which reads better than sorted.
  using json = nlohmann::ordered_json;
  auto per_direction = [](const std::array<std::uint64_t, 2>& v) {
    return json{{"upstream", v[upstream]}, {"downstream", v[downstream]}};
  };
  json histogram = json::array();
  for (std::size_t i = 0; i < s.held.buckets.size(); ++i) {
    json bound = i < HeldTimeStats::kBucketUpperUs.size() ? json(HeldTimeStats::kBucketUpperUs[i])
                                                          : json(nullptr);
    histogram.push_back({{"le_us", bound}, {"chunks", s.held.buckets[i]}});
  }
  const json out{
      {"link", spec},
      {"connections_accepted", s.connections_accepted},
      {"connections_active", s.connections_active},
      {"target_connect_failures", s.target_connect_failures},
      {"accept_failures", s.accept_failures},
      {"stalls", s.stalls},
      {"drops", s.drops},
      {"cuts", s.cuts},
      {"bytes", per_direction(s.bytes)},
      {"chunks", per_direction(s.chunks)},
      {"chunks_delayed", per_direction(s.chunks_delayed)},
      {"bytes_discarded", per_direction(s.bytes_discarded)},
      {"queued_bytes", s.queued_bytes},
      {"peak_direction_queued_bytes", s.peak_direction_queued_bytes},
      {"held",
       {{"chunks", s.held.chunks},
        {"mean_us", s.held.mean_us()},
        {"min_us", s.held.min_us},
        {"max_us", s.held.max_us},
        {"histogram", histogram}}},
  };
  return out.dump(2) + "\n";
}

}  // namespace dsekp::linkemu
