// SplitSessionStore (see split_session_store.hpp).
#include "split_session_store.hpp"

namespace dsekp::edge {

StoreResult SplitSessionStore::begin() {
  if (recovery_due_ && recover_) {
    if (!recover_()) return StoreResult{StoreStatus::storage_failure};
    recovery_due_ = false;
  }
  if (const StoreResult r = local_.begin(); !r.ok()) return r;
  const StoreResult r = state_.begin();
  if (!r.ok()) (void)local_.rollback();
  return r;
}

StoreResult SplitSessionStore::commit() {
  // Due until both commits are known to have succeeded: an exception on the way (out of memory
  // after Redis applied the script) leaves rows only in the pending list, like a failure.
  const bool was_due = recovery_due_;
  recovery_due_ = true;
  StoreResult r;
  try {
    r = state_.commit();  // a failed commit has rolled the state back
  } catch (...) {
    (void)local_.rollback();
    throw;
  }
  if (!r.ok()) {
    (void)local_.rollback();
    // A conflict wrote nothing, but a lost reply may hide a commit that Redis applied (the
    // connection re-sends it, and the second run conflicts): its rows are in the pending list.
    recovery_due_ = true;
    return r;
  }
  if (between_) between_();
  const StoreResult l = local_.commit();
  if (!l.ok()) {
    ++local_failures_;  // the state is committed: the rows wait in the pending list
    return l;
  }
  recovery_due_ = was_due;
  return l;
}

StoreResult SplitSessionStore::rollback() {
  const StoreResult l = local_.rollback();
  const StoreResult r = state_.rollback();
  return r.ok() ? l : r;
}

StoreResult SplitSessionStore::savepoint() {
  if (const StoreResult r = local_.savepoint(); !r.ok()) return r;
  const StoreResult r = state_.savepoint();
  if (!r.ok()) (void)local_.rollback_to_savepoint();
  return r;
}

StoreResult SplitSessionStore::release_savepoint() {
  const StoreResult l = local_.release_savepoint();
  if (!l.ok()) {
    // The local rows of this message are gone (SQLite undid them): undo its state too.
    (void)state_.rollback_to_savepoint();
    return l;
  }
  return state_.release_savepoint();
}

StoreResult SplitSessionStore::rollback_to_savepoint() {
  const StoreResult l = local_.rollback_to_savepoint();
  const StoreResult r = state_.rollback_to_savepoint();
  return r.ok() ? l : r;
}

}  // namespace dsekp::edge
