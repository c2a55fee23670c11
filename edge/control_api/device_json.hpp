// A registered device as JSON without its secrets: what `dsekp keys list --json` and `keys show`
// print and the control API answers. Times as ISO-8601 UTC and as Unix ms.
#pragma once

#include <nlohmann/json.hpp>

#include "edge/registry/device_registry.hpp"

namespace dsekp::edge::control_api {

[[nodiscard]] nlohmann::ordered_json device_info_json(const DeviceInfo& info);

}  // namespace dsekp::edge::control_api
