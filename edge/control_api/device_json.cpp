// device_info_json (see device_json.hpp).
#include "edge/control_api/device_json.hpp"

#include <algorithm>

#include "edge/sinks/server_csv_format.hpp"

namespace dsekp::edge::control_api {
namespace {

std::string utc_time(std::int64_t unix_ms) {
  return sinks::iso8601_utc_ms(static_cast<std::uint64_t>(std::max<std::int64_t>(unix_ms, 0)));
}

}  // namespace

nlohmann::ordered_json device_info_json(const DeviceInfo& info) {
  const auto optional = [](const std::optional<std::int64_t>& ms, bool as_text) {
    if (!ms) return nlohmann::ordered_json(nullptr);
    return as_text ? nlohmann::ordered_json(utc_time(*ms)) : nlohmann::ordered_json(*ms);
  };
  return {{"dev_id", info.dev_id},
          {"generation", info.generation},
          {"created", utc_time(info.created_ms)},
          {"rotated", optional(info.rotated_ms, true)},
          {"created_ms", info.created_ms},
          {"rotated_ms", optional(info.rotated_ms, false)},
          {"ratchet", info.ratchet},
          // PROTOCOL.md 6.6: erased once the edge's stored state was past it.
          {"secret_erased", optional(info.secret_erased_ms, true)}};
}

}  // namespace dsekp::edge::control_api
