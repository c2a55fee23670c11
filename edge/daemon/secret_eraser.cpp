// The erasure of provisioned secrets after the first ratchet step (see secret_eraser.hpp).
#include "secret_eraser.hpp"

#include "edge/logging/edge_logger.hpp"

namespace dsekp::edge::daemon {
namespace {

// After a failure (a store that cannot be made durable, a busy or failing registry) the
// erasures wait this long, and a failure is logged at most this often: a fleet of ratcheting
// devices must not turn every burst into round trips and log lines.
constexpr std::uint64_t kRetryMs = 60'000;

}  // namespace

void SecretEraser::note(const HandleResult& r) {
  if (!r.ok()) return;
  if (r.ratcheted || r.ratchet_steps > 0) step_committed_ = true;
  if (r.provisioned_secret_superseded && noted_.size() < kMaxNoted)
    noted_[r.dev_id] = *r.provisioned_secret_superseded;
}

void SecretEraser::erase_noted(std::uint64_t now_ms) {
  if ((step_committed_ || !noted_.empty()) && now_ms >= retry_after_ms_) {
    if (const StoreResult s = store_.make_durable(); !s.ok()) {
      retry_after_ms_ = now_ms + kRetryMs;
      warn(now_ms, "the state store cannot make its commits durable (" + describe(s) +
                       "): ratchet steps may be lost to a power cut, and the provisioned "
                       "secrets of ratcheting devices stay in the registry");
      step_committed_ = false;  // a minute later, at the next step or erasure
      return;
    }
    step_committed_ = false;
  }
  if (now_ms < retry_after_ms_ || (noted_.empty() && !checkpoint_owed_)) return;
  if (!open_registry(now_ms)) return;
  for (auto it = noted_.begin(); it != noted_.end();) {
    const auto& [dev_id, generation] = *it;
    if (!state_is_past_provisioning(dev_id)) {
      it = noted_.erase(it);  // removed or reset meanwhile: the registry's copy is needed
      continue;
    }
    bool erased = false;
    if (const RegistryStatus s = registry_->erase_provisioned_secret(dev_id, generation, erased);
        !s.ok()) {
      retry_after_ms_ = now_ms + kRetryMs;
      warn(now_ms, "device " + dev_id + ": erasing its provisioned secret: " + s.message() +
                       " (tried again in a minute)");
      return;  // what is left stays noted
    }
    if (erased) {
      checkpoint_owed_ = true;
      logging::logger().info(
          "device {}: provisioned secret erased from the registry (its stored state is past it)",
          dev_id);
    }
    it = noted_.erase(it);
  }
  if (checkpoint_owed_) {
    bool complete = false;
    if (const RegistryStatus s = registry_->checkpoint_wal(complete); !s.ok())
      warn(now_ms, "registry checkpoint: " + s.message());
    checkpoint_owed_ = !complete;  // a reader held it back: again at a later burst
  }
}

bool SecretEraser::open_registry(std::uint64_t now_ms) {
  if (registry_ != nullptr) return true;
  if (const RegistryStatus s =
          DeviceRegistry::open(registry_path_, OpenMode::existing_only, registry_);
      !s.ok()) {
    retry_after_ms_ = now_ms + kRetryMs;
    warn(now_ms, "registry " + registry_path_ + ": " + s.message());
    return false;
  }
  return true;
}

bool SecretEraser::state_is_past_provisioning(const std::string& dev_id) {
  DevId id;
  if (id.assign(dev_id) != Error::ok) return false;
  EdgeDeviceState state;
  std::uint64_t stored = kAbsentGeneration;
  if (!store_.load(id, state, stored).ok() || stored == kAbsentGeneration) return false;
  return state.ratchet.active && state.ratchet.epoch > 0;
}

void SecretEraser::warn(std::uint64_t now_ms, const std::string& what) {
  if (warned_ && now_ms < warned_ms_ + kRetryMs) return;
  warned_ = true;
  warned_ms_ = now_ms;
  logging::logger().warn("{}", what);
}

}  // namespace dsekp::edge::daemon
