// The erasure of provisioned secrets after the first ratchet step (see secret_eraser.hpp).
#include "secret_eraser.hpp"

#include "edge/logging/edge_logger.hpp"

namespace dsekp::edge::daemon {
namespace {

// A store that could not be made durable is asked again after this long, and a failure is
// logged at most this often: a fleet of ratcheting devices on such a store must not turn
// every burst into a round trip and a log line.
constexpr std::uint64_t kRetryMs = 60'000;

}  // namespace

void SecretEraser::note(const HandleResult& r) {
  if (r.ok() && r.provisioned_secret_superseded)
    noted_[r.dev_id] = *r.provisioned_secret_superseded;
}

void SecretEraser::erase_noted(std::uint64_t now_ms) {
  if (noted_.empty()) return;
  std::map<std::string, std::uint64_t> noted;
  noted.swap(noted_);
  if (now_ms < retry_after_ms_) return;
  if (const StoreResult s = store_.make_durable(); !s.ok()) {
    retry_after_ms_ = now_ms + kRetryMs;
    warn(now_ms, "the state store cannot make its commits durable (" + describe(s) +
                     "), so the provisioned secrets of ratcheting devices stay in the registry");
    return;
  }
  if (registry_ == nullptr) {
    if (const RegistryStatus s =
            DeviceRegistry::open(registry_path_, OpenMode::existing_only, registry_);
        !s.ok()) {
      warn(now_ms, "registry " + registry_path_ + ": " + s.message());
      return;
    }
  }
  for (const auto& [dev_id, generation] : noted) {
    bool erased = false;
    if (const RegistryStatus s = registry_->erase_provisioned_secret(dev_id, generation, erased);
        !s.ok()) {
      warn(now_ms, "device " + dev_id + ": erasing its provisioned secret: " + s.message());
      continue;
    }
    if (erased)
      logging::logger().info(
          "device {}: provisioned secret erased from the registry (its stored state is past it)",
          dev_id);
  }
}

void SecretEraser::warn(std::uint64_t now_ms, const std::string& what) {
  if (warned_ && now_ms < warned_ms_ + kRetryMs) return;
  warned_ = true;
  warned_ms_ = now_ms;
  logging::logger().warn("{}", what);
}

}  // namespace dsekp::edge::daemon
