// CredentialGenerations on the Redis session store: the registry credential generation of a
// device is a field (cred) of the device's own hash, written by the same commit script run as
// the state it describes. Several edges sharing a Redis store must share these records too:
// with a per-edge record, edge B would find no record for a session edge A established and drop
// it as stale (credential_generations.hpp says why a missing record means stale).
//
// Cost: none per message. load() answers from the cred field that RedisSessionStore::load()
// fetched with the state in the same HGETALL (the service always loads the state first), record()
// and remove() stage an operation in the store's open transaction.
#pragma once

#include "edge/service/credential_generations.hpp"
#include "redis_session_store.hpp"

namespace dsekp::edge {

class RedisCredentialGenerations final : public CredentialGenerations {
 public:
  /// `store` must outlive this object; both are used from one thread.
  explicit RedisCredentialGenerations(RedisSessionStore& store) noexcept : store_(store) {}

  StoreResult load(const DevId& dev_id, std::optional<std::uint64_t>& generation) override {
    return store_.load_credential(dev_id, generation);
  }
  StoreResult record(const DevId& dev_id, std::uint64_t generation) override {
    return store_.stage_credential(dev_id, generation);
  }
  StoreResult remove(const DevId& dev_id) override {
    return store_.stage_credential(dev_id, std::nullopt);
  }

 private:
  RedisSessionStore& store_;
};

}  // namespace dsekp::edge
