// SessionStore on a Redis server shared by several edges: sessions one edge
// establishes are usable by every other edge, and replay protection stays exact across them.
//
// Layout. Each device is one hash, key `<prefix>dev2:{<dev_id>}` (2: the layout with window
// fields; an edge of the earlier layout, which read windows from the state, finds nothing under
// these keys and so refuses frames instead of judging them on stale windows), fields state (the
// device_state_codec encoding), gen and updated_ms (commit_script.lua), cred (the
// registry credential generation) and w:<sessctr> per established session: its replay window,
// which is authoritative over the copy in the state (redis_window_field.hpp). The braces are a
// Redis Cluster hash tag: everything of one device lands in one slot. The prefix (e.g.
// "dsekp:fleet1:") lets several fleets or test runs share a server.
//
// Session-key cache (uplink_session_cache.hpp, kept in redis_uplink_keys.hpp): load() and saves
// in a transaction keep the device's established sessions in this object, so the service can
// accept a DATA frame under one of them by staging a window operation only (stage_accept),
// without a load. Failed commits, rollbacks and undone savepoints forget the devices they
// touched.
//
// Operations and round trips. load() is one HGETALL. save() and remove() outside a transaction
// are one EVALSHA each. begin() costs nothing: saves and removes inside a transaction are staged
// in this object (a load of a staged device returns the staged state, as a database would), and
// commit() sends them all in ONE EVALSHA of the commit script, which checks every generation
// condition first and writes only if all hold; one conflict fails the whole commit with
// generation_conflict and nothing is written. rollback() drops the staged operations; a
// savepoint is a mark in the staged list and rollback_to_savepoint() drops what was staged after
// it (no round trip either). A batch of messages in one transaction is thus one script run, and
// one conflicting device fails the whole batch (docs/SCALING.md). The call itself, with the
// script's loading, is redis_commit_call.hpp. round_trips() counts every command sent.
//
// Why two edges can never both accept the same frame. Acceptance of (session, seq) is decided by
// the commit script in Redis, atomically, never by an edge's private copy. On the fast path the
// edge stages "accept seq into the window field of the session with this tag", which conflicts
// if the field already holds seq, has moved past it, or names another session. On the full path
// (load the device, decide in the protocol core, save) the save is conditioned on the loaded
// generation g (structure: sessions, pending INIT, replay cache) and its window changes become the
// same accept operations. Of two edges that both decided to accept one frame, exactly one commit
// applies; the other fails with generation_conflict, writing nothing. EdgeService reports a
// failed commit as store_failure, a transient failure: the message is not acknowledged as
// processed and is handled again (the daemon's retry, or QoS 1 redelivery) after the store forgot
// the devices of the failed commit, so the second handling loads the window, which holds seq, and
// the core rejects the frame as a replay. The same holds for a frame sent again to another edge
// later.
//
// Semantics that differ from the SQLite store (SessionStore allows them; the service relies on
// none of them):
// - Inside a transaction a save with a known expected generation g returns g + 1 (what it will
//   be once committed: the condition guarantees it); one with kAnyGeneration returns
//   kAnyGeneration, because the stored generation is only known when the commit runs.
// - A load inside a transaction reads the committed state as of that moment; isolation comes
//   from the generation conditions at commit, not from a lock held since begin().
// - A commit whose reply is lost (the connection breaks after the script was sent) fails with
//   storage_failure although Redis may have applied it. The state is then still consistent and
//   the edge re-handles the message, finding the frame already in the window (a replay), so
//   nothing is accepted twice; docs/SCALING.md discusses what this means for the sink rows.
// - Generations restart at 1 after a remove, as in SQLite. An edge that loaded generation g
//   before another edge removed the device and saved it g times again would not see the change
//   (ABA); that needs a key rotation and g full handshakes within one message's handling.
//
// Failure: when Redis is unreachable or does not answer within the command timeout, every call
// fails with storage_failure, at once while the connection is backing off (fail closed: the
// edge accepts nothing it cannot record), and a later call reconnects (redis_connection.hpp).
// Durability is Redis's: with appendonly yes and appendfsync everysec, a commit survives the
// Redis process being killed (the AOF is written to the kernel before the reply, unless a stalled
// fsync makes Redis postpone it, by up to 2 s), not a power loss of the Redis host within the
// last second or two; appendfsync always matches SQLite's synchronous=FULL.
//
// Not thread-safe: one thread uses a store object at a time. Several store objects (several
// edges) may share one server.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <unordered_map>

#include "edge/store/redis/redis_client.hpp"
#include "edge/store/redis/redis_commit_call.hpp"
#include "edge/store/redis/redis_uplink_keys.hpp"
#include "edge/store/session_store.hpp"
#include "edge/store/uplink_session_cache.hpp"

namespace dsekp::edge {

struct RedisStoreOptions {
  redis::RedisEndpoint endpoint;
  /// Non-empty: a Redis Cluster, its slot map asked of these nodes (each with `endpoint`'s
  /// login and timeouts); `endpoint`'s host and port are then not used. See "Redis Cluster" in
  /// the file comment.
  std::vector<std::pair<std::string, int>> cluster_seeds;
  /// On a cluster: replicas that must have each commit before it counts (WAIT), and how long to
  /// wait for them. A commit they do not confirm fails (storage_failure) although its primary
  /// applied it: a primary lost right after a commit only its own memory held would take the
  /// commit with it when its replica is promoted.
  redis::ReplicaWait cluster_wait{1, 500};

  /// The servers to connect to: `endpoint`, or one per cluster seed with `endpoint`'s login
  /// and timeouts.
  [[nodiscard]] std::vector<redis::RedisEndpoint> nodes() const;
  /// Prepended to every key. Must not contain '{' or '}' (they would change the hash tag).
  std::string prefix = "dsekp:";
  /// Devices whose established sessions' keys are kept in this process for the uplink fast
  /// path (uplink_session_cache.hpp); about 250 bytes per session. 0 turns the fast path off.
  /// When full, an arbitrary device is dropped for a new one (it reloads on its next frame).
  std::size_t cache_devices = 65536;
};

class RedisSessionStore final : public SessionStore, public UplinkSessionCache {
 public:
  /// Connects to the server and loads the commit script. Returns null and sets `error` if the
  /// options are invalid or the server cannot be reached (an edge should not start blind).
  static std::unique_ptr<RedisSessionStore> open(const RedisStoreOptions& options,
                                                 std::string& error);
  ~RedisSessionStore() override;
  RedisSessionStore(const RedisSessionStore&) = delete;
  RedisSessionStore& operator=(const RedisSessionStore&) = delete;

  StoreResult load(const DevId& dev_id, EdgeDeviceState& out, std::uint64_t& generation) override;
  StoreResult save(const DevId& dev_id, const EdgeDeviceState& state, std::uint64_t now_ms,
                   std::uint64_t& generation) override;
  StoreResult remove(const DevId& dev_id) override;
  StoreResult begin() override;
  StoreResult commit() override;
  StoreResult rollback() override;
  [[nodiscard]] bool in_transaction() const noexcept override { return in_transaction_; }
  StoreResult savepoint() override;
  StoreResult release_savepoint() override;
  StoreResult rollback_to_savepoint() override;
  /// ok only if the server's configuration makes every acknowledged write durable
  /// (redis_durability.hpp), asked of the server each time.
  StoreResult make_durable() override;
  [[nodiscard]] bool in_savepoint() const noexcept override { return in_savepoint_; }

  // The uplink fast path (uplink_session_cache.hpp). The cache is filled by load(): the
  // established sessions of a device whose hash has a cred record.
  [[nodiscard]] UplinkSessionCache* uplink_cache() noexcept override {
    return uplink_.enabled() ? this : nullptr;
  }
  [[nodiscard]] EdgeSession* find_session(const DevId& dev_id, std::uint16_t sessctr,
                                          std::uint64_t credential_generation) noexcept override;
  StoreResult stage_accept(const DevId& dev_id, const EdgeSession& session,
                           std::uint32_t seq) override;
  void forget(const DevId& dev_id) noexcept override;
  // The hash's cred record, read with the state, is what the cache is checked against.
  void note_checked(const DevId&, std::uint64_t) noexcept override {}
  /// Devices in the cache now.
  [[nodiscard]] std::size_t cached_devices() const noexcept { return uplink_.size(); }

  /// Network round trips so far (commands sent, including script loads).
  [[nodiscard]] std::uint64_t round_trips() const noexcept { return client_.round_trips(); }
  /// Successful connects so far (1 after open(); more after reconnects).
  [[nodiscard]] std::uint64_t connects() const noexcept { return client_.connects(); }
  /// Whether the last command reached Redis. Any thread may call it (/healthz).
  [[nodiscard]] bool up() const noexcept { return client_.up(); }
  /// See RedisConnection::set_outage_handler: the daemon's fail-closed pause.
  void set_outage_handler(redis::OutageHandler handler) {
    client_.set_outage_handler(std::move(handler));
  }
  /// The connection to the server or cluster (its counters; the cluster's redirects).
  [[nodiscard]] const redis::RedisClient& client() const noexcept { return client_; }

  /// The registry credential generation recorded with `dev_id`'s state (hash field cred), for
  /// RedisCredentialGenerations. Free of a round trip when it follows load() of the same device
  /// (load() fetches the field with the state) or when this transaction staged it.
  StoreResult load_credential(const DevId& dev_id, std::optional<std::uint64_t>& generation);
  /// Stages the record (nullopt: delete it) in the open transaction; transaction_misuse outside
  /// one. It commits with the transaction's saves, in the same script run.
  StoreResult stage_credential(const DevId& dev_id, std::optional<std::uint64_t> generation);

  /// The key under which `dev_id`'s state is stored.
  [[nodiscard]] std::string key_of(const DevId& dev_id) const;
  [[nodiscard]] std::string device_key(std::string_view dev_id) const;

  // Write-ahead of the sink rows (docs/SCALING.md "Running several edges"). With a pending key
  // set, commit() also replaces the list at that key with the rows staged in the transaction
  // (stage_pending_row), in the same script run as the states: one round trip, as before. The
  // edge commits the same rows locally afterwards; a restarted edge re-inserts the ones it
  // lacks (edge/daemon/pending_rows.hpp). Every commit of a transaction replaces the list, an
  // empty one deletes it, so it always holds the rows of this store's last committed unit.

  /// `<prefix>pending:{<edge_id>}`: the list of the edge whose MQTT client id is `edge_id`
  /// (its own hash tag: one slot per edge in Redis Cluster, see SCALING.md).
  [[nodiscard]] std::string pending_key_of(std::string_view edge_id) const;
  /// Turns the write-ahead on (a key from pending_key_of) or off (""). Outside a transaction.
  void set_pending_key(std::string key) { pending_key_ = std::move(key); }
  /// Stages one encoded row of `dev_id`'s for the open transaction (undone with its savepoint
  /// or rollback); transaction_misuse outside one.
  StoreResult stage_pending_row(std::string_view dev_id, std::string row);
  /// Rows the last successful commit() wrote to the pending list.
  [[nodiscard]] std::size_t last_commit_rows() const noexcept { return last_commit_rows_; }
  /// Reads the list at `key` (LRANGE), oldest first; empty if there is none. On a cluster,
  /// every per-slot list of that edge's (see the file comment), one after the other.
  StoreResult read_pending(const std::string& key, std::vector<std::string>& rows);
  /// Deletes the list at `key` (on a cluster: every per-slot list of that edge's).
  StoreResult clear_pending(const std::string& key);
  /// On a cluster: the list in `slot` of the edge whose pending key is `key`, and the set of
  /// the slots that edge has lists in (both for the recovery, and for the tests).
  [[nodiscard]] static std::string pending_key_in_slot(const std::string& key, std::uint16_t slot);
  [[nodiscard]] static std::string pending_slots_key(const std::string& key);
  /// Why the last storage_failure happened (connection error or Redis error reply).
  [[nodiscard]] const std::string& last_error() const noexcept { return last_error_; }

 private:
  using Kind = redis::CommitOpKind;
  using Staged = redis::CommitOp;
  // A session's window as this store last loaded or saved it, to turn a save into window
  // operations: the seqs added since (wacc) rather than the whole window (which would undo what
  // other edges accepted meanwhile).
  struct WindowSnapshot {
    std::uint16_t sessctr = 0;
    std::string tag;
    ReplayWindow window;
  };
  explicit RedisSessionStore(const RedisStoreOptions& options);
  /// `rows` non-null: also replaces the pending list with them (pending_key_). On a cluster,
  /// one run per slot (run_script_in_slots).
  StoreResult run_script(const std::vector<Staged>& ops, std::vector<std::uint64_t>& generations,
                         const std::vector<std::string>* rows = nullptr);
  StoreResult run_script_in_slots(const std::vector<Staged>& ops,
                                  std::vector<std::uint64_t>& generations,
                                  const std::vector<std::string>* rows);
  /// The lists that hold the rows of the edge whose pending key is `key`: that key on one
  /// server, the per-slot lists its set names on a cluster.
  StoreResult pending_lists(const std::string& key, std::vector<std::string>& lists);
  /// Adds those of `slots` not yet added by this process to this edge's set of pending-list
  /// slots (one SADD).
  StoreResult note_pending_slots(const std::vector<std::uint16_t>& slots);
  StoreResult failure(std::string why);
  /// `r`, with its message kept as last_error() if it is a storage_failure.
  StoreResult recorded(StoreResult r);
  const Staged* find_staged(const std::string& key, Kind wanted) const noexcept;
  void discard_staged() noexcept;
  /// Forgets the cached devices of the staged operations from index `staged_from` and of the
  /// staged accepts from index `touched_from` on.
  void forget_touched(std::size_t staged_from, std::size_t touched_from) noexcept;
  /// After a commit that failed (or may not have been applied): the cached windows go back to
  /// what they were before the transaction; the devices of its saves, removes and cred records
  /// and the one that conflicted are forgotten.
  void restore_after_failed_commit() noexcept;
  /// Appends the window operations that store `state`'s established sessions' windows.
  /// `tags`: of `state`'s established sessions, in order (as in the three below).
  void stage_windows(const std::string& key, const EdgeDeviceState& state,
                     const std::vector<std::string>& tags, std::uint64_t generation,
                     std::vector<Staged>& ops) const;
  void remember(const std::string& key, const EdgeDeviceState& state,
                const std::vector<std::string>& tags);
  void apply_staged_accepts(const std::string& key, EdgeDeviceState& state,
                            const std::vector<std::string>& tags,
                            const Staged* after = nullptr) const;

  redis::RedisClient client_;
  redis::CommitScript script_{client_};
  redis::ReplicaWait cluster_wait_;
  std::string prefix_;
  std::vector<Staged> staged_;
  std::size_t savepoint_mark_ = 0;                // staged_.size() at savepoint()
  std::string pending_key_;                       // "": no write-ahead of rows
  std::vector<std::string> pending_rows_;         // staged rows of the open transaction
  std::vector<std::uint16_t> pending_row_slots_;  // each row's device's slot (on a cluster)
  std::vector<bool> pending_slots_noted_;         // slots in this edge's set (on a cluster)
  // On a cluster each per-slot list starts with "u:<unit>", the commit that wrote it.
  static constexpr std::string_view kUnitMark = "u:";
  std::uint64_t unit_ = 0;
  std::size_t rows_mark_ = 0;  // pending_rows_.size() at savepoint()
  std::size_t last_commit_rows_ = 0;
  bool in_transaction_ = false;
  bool in_savepoint_ = false;
  std::string last_error_;
  // The cred field fetched by the last load(), for the load_credential() that follows it.
  std::string loaded_key_;
  std::optional<std::uint64_t> loaded_cred_;
  std::unordered_map<std::string, std::vector<WindowSnapshot>> snapshots_;  // by key
  redis::UplinkKeys uplink_;          // the fast path's sessions (redis_uplink_keys.hpp)
  std::vector<std::string> touched_;  // keys of accepts staged in the open transaction
  std::size_t touched_mark_ = 0;      // touched_.size() at savepoint()
  // A cached session's window as it was when the open transaction first used it: a failed
  // commit puts it back (behind Redis, never ahead) instead of forgetting the device, so only
  // the device that conflicted has to be loaded again.
  struct WindowBefore {
    std::string key;
    std::uint16_t sessctr = 0;
    std::string tag;
    ReplayWindow window;
  };
  std::vector<WindowBefore> windows_before_;
  // The devices whose operations conflicted in the last commit (one per slot's run at most).
  std::vector<std::string> conflict_keys_;
};

/// Checks a key prefix: printable ASCII without spaces or braces, at most 128 bytes ("" is
/// allowed). Returns an empty string if valid, else the reason.
[[nodiscard]] std::string check_redis_prefix(std::string_view prefix);
/// Checks an edge id for pending_key_of(): the same rules, and not empty.
[[nodiscard]] std::string check_redis_edge_id(std::string_view edge_id);

}  // namespace dsekp::edge
