// Uplink keys kept for the Redis store's fast path (see redis_uplink_keys.hpp).
#include "edge/store/redis/redis_uplink_keys.hpp"

namespace dsekp::edge::redis {
namespace {

// The part of a session the uplink fast path needs: its uplink keys (copied explicitly, as
// SecretBytes wants) and window. The downlink keys are left out (zero): they are not needed to
// open uplink frames, so no copy of them outlives a handling.
EdgeSession uplink_copy(const EdgeSession& s) {
  EdgeSession out;
  out.sessctr = s.sessctr;
  out.keys.up.key = s.keys.up.key.clone();
  out.keys.up.iv_base = s.keys.up.iv_base.clone();
  out.uplink_window = s.uplink_window;
  out.downlink_seq = s.downlink_seq;
  out.created_ms = s.created_ms;
  out.last_seen_ms = s.last_seen_ms;
  out.serial = s.serial;
  return out;
}

}  // namespace

void UplinkKeys::put(const std::string& key, const EdgeDeviceState& state,
                     const std::vector<std::string>& tags, std::uint64_t credential_generation) {
  if (capacity_ == 0) return;
  if (state.established_count == 0) {
    devices_.erase(key);
    return;
  }
  auto it = devices_.find(key);
  if (it == devices_.end()) {
    if (devices_.size() >= capacity_) devices_.erase(devices_.begin());
    it = devices_.emplace(key, Device{}).first;
  }
  Device& device = it->second;
  device.credential_generation = credential_generation;
  device.sessions.clear();
  for (std::uint32_t i = 0; i < state.established_count; ++i)
    device.sessions.push_back(Entry{uplink_copy(state.established[i]), tags[i]});
}

UplinkKeys::Entry* UplinkKeys::find(const std::string& key, std::uint16_t sessctr,
                                    std::uint64_t credential_generation) noexcept {
  const auto it = devices_.find(key);
  if (it == devices_.end() || it->second.credential_generation != credential_generation)
    return nullptr;
  for (Entry& e : it->second.sessions)
    if (e.session.sessctr == sessctr && !e.tag.empty()) return &e;
  return nullptr;
}

const UplinkKeys::Entry* UplinkKeys::entry_of(const std::string& key,
                                              const EdgeSession& session) const noexcept {
  const auto it = devices_.find(key);
  if (it == devices_.end()) return nullptr;
  for (const Entry& e : it->second.sessions)
    if (&e.session == &session) return &e;
  return nullptr;
}

void UplinkKeys::put_back_window(const std::string& key, std::uint16_t sessctr,
                                 const std::string& tag, const ReplayWindow& window) noexcept {
  const auto it = devices_.find(key);
  if (it == devices_.end()) return;
  for (Entry& e : it->second.sessions)
    if (e.session.sessctr == sessctr && e.tag == tag) e.session.uplink_window = window;
}

}  // namespace dsekp::edge::redis
