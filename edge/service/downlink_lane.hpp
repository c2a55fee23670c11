// Which downlink seqs one edge may seal with, when several edges share the devices' states.
//
// Why: each edge's downlink journal (edge/store/downlink_journal.hpp) remembers the seqs that edge
// used, so after the shared store went back in time (Redis restarted from an older AOF/RDB) every
// edge seals above its own history; it cannot know another edge's. Lanes make the histories
// disjoint: edge K of N seals only seqs ≡ K (mod N), so no two edges ever pick the same seq, and
// each edge's journal covers its own lane. The device's downlink window accepts the gaps (a seq
// only has to be new). Every edge of a group needs its own index and the same count; one edge
// alone is lane 0 of 1 (every seq).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dsekp::edge {

struct DownlinkLane {
  std::uint32_t index = 0;  // 0 <= index < count
  std::uint32_t count = 1;  // 1..kMaxCount

  static constexpr std::uint32_t kMaxCount = 64;

  /// The smallest seq >= `from` in this lane.
  [[nodiscard]] std::uint64_t first_at_or_after(std::uint64_t from) const noexcept {
    if (count <= 1) return from;  // one lane (or a lane built without the parser's checks)
    const std::uint64_t rest = from % count;
    return from - rest + index + (rest > index ? count : 0);
  }
};

/// "K/N" (e.g. "1/3"). False, with `error` set, unless 0 <= K < N <= DownlinkLane::kMaxCount.
bool parse_downlink_lane(std::string_view text, DownlinkLane& out, std::string& error);

}  // namespace dsekp::edge
