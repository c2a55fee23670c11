// The admin key and clock of the admin request fuzz target, shared with the corpus writer so that
// the seeds are requests the target's edge accepts.
#pragma once

#include <cstddef>
#include <cstdint>

#include "edge/admin/admin_auth.hpp"

namespace dsekp::fuzz {

inline edge::admin::AdminKey admin_fuzz_key() {
  edge::admin::AdminKey key{};
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<std::uint8_t>(0xA0 + i);
  return key;
}

inline constexpr std::uint64_t kAdminFuzzNowMs = 1'764'460'800'000;

}  // namespace dsekp::fuzz
