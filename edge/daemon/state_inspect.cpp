// read_ratchet_epoch (see state_inspect.hpp).
#include "edge/daemon/state_inspect.hpp"

#include <filesystem>
#include <memory>

#include "edge/store/redis/redis_store_url.hpp"
#include "edge/store/sqlite_session_store.hpp"

namespace dsekp::edge::daemon {
namespace {

bool epoch_in(SessionStore& store, const DevId& id, std::optional<std::uint32_t>& epoch,
              std::string& error) {
  EdgeDeviceState state;
  std::uint64_t generation = kAbsentGeneration;
  if (const StoreResult s = store.load(id, state, generation); !s.ok()) {
    error = "cannot read the state: " + describe(s);
    return false;
  }
  if (generation != kAbsentGeneration && state.ratchet.active) epoch = state.ratchet.epoch;
  return true;
}

}  // namespace

bool read_ratchet_epoch(const StateLocation& where, const std::string& dev_id,
                        std::optional<std::uint32_t>& epoch, std::string& error) {
  epoch.reset();
  DevId id;
  if (id.assign(dev_id) != Error::ok) {
    error = "invalid dev_id";
    return false;
  }
  if (const std::string path = sqlite_state_path(where); !path.empty()) {
    if (!std::filesystem::exists(path)) return true;  // no edge has stored anything yet
    auto store = SqliteSessionStore::open(path, {}, error);
    return store != nullptr && epoch_in(*store, id, epoch, error);
  }
  auto store = open_redis_store_url(where.store, where.store_password, error);
  return store != nullptr && epoch_in(*store, id, epoch, error);
}

}  // namespace dsekp::edge::daemon
