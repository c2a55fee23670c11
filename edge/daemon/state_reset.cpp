// reset_device_state (see state_reset.hpp).
#include "edge/daemon/state_reset.hpp"

#include <filesystem>
#include <memory>

#include "edge/service/sqlite_credential_generations.hpp"
#include "edge/store/redis/redis_credential_generations.hpp"
#include "edge/store/redis/redis_store_url.hpp"
#include "edge/store/sqlite_session_store.hpp"

namespace dsekp::edge::daemon {
namespace {

bool remove_in(SessionStore& store, CredentialGenerations& generations, const DevId& id,
               bool& found, std::string& error) {
  EdgeDeviceState state;
  std::uint64_t generation = kAbsentGeneration;
  const StoreResult loaded = store.load(id, state, generation);
  found = generation != kAbsentGeneration || loaded.status == StoreStatus::corrupt_state;
  Transaction tx(store);
  StoreResult s = tx.status();
  if (s.ok()) s = store.remove(id);
  if (s.ok()) s = generations.remove(id);
  if (s.ok()) s = tx.commit();
  if (!s.ok()) error = "cannot remove the state: " + describe(s);
  return s.ok();
}

}  // namespace

std::string sqlite_state_path(const StateLocation& where) {
  if (!where.store.empty() && where.store != "sqlite") return "";
  return where.state_db.empty() ? where.registry_db + ".state" : where.state_db;
}

bool reset_device_state(const StateLocation& where, const std::string& dev_id, bool& found,
                        std::string& error) {
  found = false;
  DevId id;
  if (id.assign(dev_id) != Error::ok) {
    error = "invalid dev_id";
    return false;
  }
  if (const std::string path = sqlite_state_path(where); !path.empty()) {
    if (!std::filesystem::exists(path)) return true;  // no edge has stored anything yet
    auto store = SqliteSessionStore::open(path, {}, error);
    if (store == nullptr) return false;
    auto generations = SqliteCredentialGenerations::open(*store, error);
    if (generations == nullptr) return false;
    return remove_in(*store, *generations, id, found, error);
  }
  auto store = open_redis_store_url(where.store, where.store_password, error);
  if (store == nullptr) return false;
  RedisCredentialGenerations generations(*store);
  return remove_in(*store, generations, id, found, error);
}

}  // namespace dsekp::edge::daemon
