// The optional fast path for DATA frames under an established session: the core opens the
// frame against a session the store hands out, and the store records only the window's move,
// instead of the service loading the device's whole state and saving it back.
//
// Redis store (several edges sharing it, issue 7): the session keys, which never change once a
// session is established, are kept in this process, so a frame under an established session
// costs no read of the device's state; the only work left in the shared store is the
// replay-window operation, which is staged in the open transaction and runs with the other
// operations of the batch at commit (one round trip per batch). Why it stays exact there: the
// cached window is the shared window as loaded plus this process's own acceptances, so it holds
// a subset of what the shared store has accepted and is never ahead of it: a seq the cached
// window refuses (replay, too_old) is refused by the shared window too. A seq it accepts is
// accepted only when the commit finds the shared window agrees (the seq is new and within the
// window) and the session still exists with the same keys; otherwise the commit fails with
// generation_conflict, nothing is written, the devices the transaction touched are forgotten,
// and the re-handled message loads the whole state again.
//
// SQLite store (one edge; sqlite_session_store.hpp): the handed-out session is the one in the
// open transaction's write-back, whose state the full path has saved and checked against the
// registry (note_checked), in this transaction or in an earlier one whose committed states were
// kept (SqliteStoreOptions::cached_devices; dropped when another connection writes the
// database). Exact because the write-back is the newest state the database holds or the open
// transaction made: the window moved is the one the commit writes, and an undone savepoint
// puts it back.
#pragma once

#include <cstdint>

#include "dsekp/edge_session.hpp"
#include "edge/store/session_store.hpp"

namespace dsekp::edge {

class UplinkSessionCache {
 public:
  /// The cached established session `sessctr` of `dev_id`, if the device was loaded from the
  /// shared store under registry credential generation `credential_generation` (the cred
  /// record of its state) and not forgotten since; else null. The pointer is valid until the
  /// next call on the store. The caller may let the core accept a frame into its window, and
  /// must then call stage_accept() or forget().
  [[nodiscard]] virtual EdgeSession* find_session(const DevId& dev_id, std::uint16_t sessctr,
                                                  std::uint64_t credential_generation) noexcept = 0;

  /// Stages, in the open transaction, the acceptance of `seq` under `session` (found above;
  /// its window already holds seq). The commit then fails with generation_conflict if the
  /// shared window holds seq already, has moved past it, or the session is gone or was
  /// replaced. An undo of the transaction or savepoint forgets the device. transaction_misuse
  /// outside a transaction (the device is then forgotten too).
  virtual StoreResult stage_accept(const DevId& dev_id, const EdgeSession& session,
                                   std::uint32_t seq) = 0;

  /// Drops the cached sessions of `dev_id` (the next frame loads the whole state); a session
  /// handed out and not staged gets its window back.
  virtual void forget(const DevId& dev_id) noexcept = 0;

  /// The full path has just saved the state of `dev_id` in the open transaction, after checking
  /// it against the registry's credential generation `credential_generation` (not stale). A
  /// store whose cached state carries its own credential record (Redis) has nothing to do.
  virtual void note_checked(const DevId& dev_id, std::uint64_t credential_generation) noexcept = 0;

 protected:
  ~UplinkSessionCache() = default;  // owned by the store, never deleted through this interface
};

}  // namespace dsekp::edge
