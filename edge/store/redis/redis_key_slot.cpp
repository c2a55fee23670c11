// Key slots (see redis_key_slot.hpp); the CRC is Boost's, parameterised as XMODEM.
#include "edge/store/redis/redis_key_slot.hpp"

#include <boost/crc.hpp>
#include <string>
#include <vector>

namespace dsekp::edge::redis {

std::string_view hashed_part(std::string_view key) noexcept {
  const std::size_t open = key.find('{');
  if (open == std::string_view::npos) return key;
  const std::size_t close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

std::uint16_t key_slot(std::string_view key) noexcept {
  const std::string_view hashed = hashed_part(key);
  boost::crc_optimal<16, 0x1021, 0, 0, false, false> crc;  // CRC-16/XMODEM
  crc.process_bytes(hashed.data(), hashed.size());
  return static_cast<std::uint16_t>(crc.checksum() % kClusterSlots);
}

std::string_view slot_tag(std::uint16_t slot) {
  // Made once (a few hundred thousand CRCs, about a millisecond), then read-only.
  static const std::vector<std::string> tags = [] {
    std::vector<std::string> out(kClusterSlots);
    std::size_t missing = kClusterSlots;
    for (std::uint64_t n = 0; missing > 0; ++n) {
      std::string tag = std::to_string(n);
      std::string& entry = out[key_slot(tag)];
      if (entry.empty()) {
        entry = std::move(tag);
        --missing;
      }
    }
    return out;
  }();
  return tags.at(slot % kClusterSlots);
}

}  // namespace dsekp::edge::redis
