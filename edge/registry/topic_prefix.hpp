// The deployment's topic prefix (`dsekp keys topic-prefix`, `dsekp edge --prefix`): put in
// front of every DSEKP topic as given (include the trailing '/': "site1/" gives
// "site1/dsekp/init"). The registry keeps it, so that the devices' material, the broker's grants
// and the edge agree on it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace dsekp::edge {

/// The longest prefix the device SDK holds (firmware/include/dsekp_device.h,
/// DSEKP_TOPIC_PREFIX_MAX): a deployment with a longer one cannot provision SDK devices.
inline constexpr std::size_t kFirmwareTopicPrefixMax = 32;

/// A topic prefix that is safe in an ACL line, a topic and a C string literal: printable ASCII
/// without spaces, the wildcards '+' and '#', '%' (pattern expansion), '"' or '\\', not starting
/// with '$', at most 128 characters. Empty: valid. Otherwise the reason.
[[nodiscard]] std::string topic_prefix_problem(std::string_view prefix);

}  // namespace dsekp::edge
