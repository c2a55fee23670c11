// The edge's persistent per-device state (EdgeDeviceState), behind an interface with two
// implementations: the SQLite store of a single edge and the Redis store through which several
// edges serve one fleet (redis/redis_session_store.hpp).
//
// Transactions are part of the interface because a frame's moved replay window and its sink row
// must commit as one unit, before anything they produced is published (docs/ARCHITECTURE.md,
// "The edge's durability", tells why and how; PROTOCOL.md 6.5).
//
// Generations: every stored state carries a counter that each save increments. load() returns
// it; save() with the loaded generation fails with generation_conflict if another writer saved
// the device in between. That is how "one writer per device at a time" (6.5) is enforced once
// several edges share a store; a single edge may save unconditionally (kAnyGeneration).
//
// Savepoints (the daemon's batches): one per message inside the burst's transaction, so a
// message that fails or is refused half-way is undone alone (rollback_to_savepoint()) and the
// others still commit together. One level only: a savepoint inside a savepoint is
// transaction_misuse. The Redis store implements a transaction as a client-side write set
// applied at commit by one Lua script that checks the conditions and writes; a savepoint is a
// mark in that write set, and rollback_to_savepoint() drops the writes after the mark. Nothing
// reaches the server before commit(), so a savepoint costs no round trip.
//
// Implementations are not thread-safe: one thread uses a store object at a time.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "device_state_codec.hpp"
#include "dsekp/edge_session.hpp"
#include "dsekp/spec.hpp"

namespace dsekp::edge {

enum class [[nodiscard]] StoreStatus : std::uint8_t{
    ok = 0,
    corrupt_state,        // a stored state failed to decode (see StoreResult::codec)
    invalid_state,        // the state to save breaks an invariant (see StoreResult::codec)
    dev_id_mismatch,      // the state to save is bound to another device than its key
    generation_conflict,  // another writer saved the device since the expected generation
    transaction_misuse,   // begin() inside a transaction, commit()/rollback() outside one,
                          // a savepoint outside a transaction or inside another savepoint
    storage_failure,      // the backend failed (disk full, I/O error, locked database)
};

/// Stable snake_case name, e.g. "corrupt_state". Never null.
[[nodiscard]] const char* store_status_name(StoreStatus s) noexcept;

struct [[nodiscard]] StoreResult {
  StoreStatus status = StoreStatus::ok;
  StateCodecError codec = StateCodecError::ok;  // the reason for corrupt_state / invalid_state
  // The backend's own words for a storage_failure (SQLite's or Redis' error), for the
  // operator's log and fail-stop lines; never for decisions. Empty otherwise.
  std::string message{};

  [[nodiscard]] bool ok() const noexcept { return status == StoreStatus::ok; }
};

/// The status with its reason and the backend's message, e.g.
/// "storage_failure (database or disk is full)" or "corrupt_state (truncated)".
[[nodiscard]] std::string describe(const StoreResult& r);

/// A storage_failure with the backend's words.
[[nodiscard]] inline StoreResult storage_failure(std::string message) {
  return StoreResult{StoreStatus::storage_failure, StateCodecError::ok, std::move(message)};
}

/// Generation of a device that has no stored state.
inline constexpr std::uint64_t kAbsentGeneration = 0;
/// save() without a generation check (a single edge that holds the only writer).
inline constexpr std::uint64_t kAnyGeneration = UINT64_MAX;

class UplinkSessionCache;  // uplink_session_cache.hpp

class SessionStore {
 public:
  virtual ~SessionStore() = default;

  /// The store's fast path for DATA frames under established sessions, or null if it has none
  /// (uplink_session_cache.hpp: the Redis store shared by several edges has one).
  [[nodiscard]] virtual UplinkSessionCache* uplink_cache() noexcept { return nullptr; }

  /// Loads the state of `dev_id` into `out` and its generation into `generation`. A device with
  /// no stored state gets a fresh EdgeDeviceState and kAbsentGeneration. A stored state that
  /// does not decode, or that is bound to another device, is corrupt_state (and `out` is fresh).
  virtual StoreResult load(const DevId& dev_id, EdgeDeviceState& out,
                           std::uint64_t& generation) = 0;

  /// Stores `state` as the state of `dev_id` atomically (all of it or none of it).
  /// `generation`: in, the generation the caller loaded (kAbsentGeneration: must not exist yet)
  /// or kAnyGeneration; out, the new generation. `now_ms` is recorded as the update time.
  virtual StoreResult save(const DevId& dev_id, const EdgeDeviceState& state, std::uint64_t now_ms,
                           std::uint64_t& generation) = 0;

  /// Deletes the state of `dev_id` (e.g. when its DEV_SECRET is rotated: every session derived
  /// from the old secret must go). Deleting an absent device is ok.
  virtual StoreResult remove(const DevId& dev_id) = 0;

  /// Opens a transaction: saves and removes until commit() take effect together or not at all
  /// (rollback(), or a failed commit). No nesting. Prefer the Transaction guard below.
  virtual StoreResult begin() = 0;
  virtual StoreResult commit() = 0;
  virtual StoreResult rollback() = 0;
  [[nodiscard]] virtual bool in_transaction() const noexcept = 0;

  /// Marks the open transaction: the writes from here on can be undone alone. Needs an open
  /// transaction and no open savepoint.
  virtual StoreResult savepoint() = 0;
  /// Keeps the writes since the savepoint as part of the transaction (they commit with it).
  /// A failure has undone them (as rollback_to_savepoint() would) or lost the transaction.
  virtual StoreResult release_savepoint() = 0;
  /// Undoes the writes since the savepoint and ends it; the transaction stays open. If the
  /// backend already lost the whole transaction (e.g. SQLite after a disk-full error) this is
  /// ok and the later commit() fails.
  virtual StoreResult rollback_to_savepoint() = 0;
  [[nodiscard]] virtual bool in_savepoint() const noexcept = 0;

  /// Makes every committed change survive power loss too, not only the process dying, or fails
  /// saying why it cannot promise that. Outside a transaction. A ratcheting device's
  /// provisioned secret is erased from the registry only after this succeeded (PROTOCOL.md 6.6,
  /// edge rule 1): from then on the stored state holds the only copy of its secret.
  virtual StoreResult make_durable() = 0;
};

/// Scope of one atomic unit: begins on construction, rolls back on destruction unless commit()
/// or rollback() was called (a failed commit has rolled back already). Check status() after
/// construction: the begin can fail.
class Transaction {
 public:
  explicit Transaction(SessionStore& store) : store_(store), begun_(store.begin()) {}
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction() {
    if (begun_.ok() && !done_) (void)store_.rollback();
  }

  [[nodiscard]] const StoreResult& status() const noexcept { return begun_; }
  StoreResult commit() {
    if (!begun_.ok() || done_) return StoreResult{StoreStatus::transaction_misuse};
    done_ = true;
    return store_.commit();
  }
  StoreResult rollback() {
    if (!begun_.ok() || done_) return StoreResult{StoreStatus::transaction_misuse};
    done_ = true;
    return store_.rollback();
  }

 private:
  SessionStore& store_;
  StoreResult begun_;
  bool done_ = false;
};

}  // namespace dsekp::edge
