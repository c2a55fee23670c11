// parse_downlink_lane (see downlink_lane.hpp).
#include "downlink_lane.hpp"

#include <charconv>

namespace dsekp::edge {

bool parse_downlink_lane(std::string_view text, DownlinkLane& out, std::string& error) {
  const auto slash = text.find('/');
  std::uint32_t index = 0;
  std::uint32_t count = 0;
  const auto number = [](std::string_view s, std::uint32_t& v) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return !s.empty() && ec == std::errc() && end == s.data() + s.size();
  };
  if (slash == std::string_view::npos || !number(text.substr(0, slash), index) ||
      !number(text.substr(slash + 1), count) || count == 0 || count > DownlinkLane::kMaxCount ||
      index >= count) {
    error = "downlink lane \"" + std::string(text.substr(0, 32)) +
            "\": expected K/N with 0 <= K < N <= " + std::to_string(DownlinkLane::kMaxCount) +
            " (this edge's index K among N edges on one store)";
    return false;
  }
  out = DownlinkLane{index, count};
  return true;
}

}  // namespace dsekp::edge
