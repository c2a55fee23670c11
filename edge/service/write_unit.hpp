// One unit of work of EdgeService: a session-store transaction and the sink rows written inside
// it, which commit together or not at all (sink_writer.hpp has the call sequence).
//
// Inside a batch (EdgeService::begin_batch: the store already has a transaction open) the unit
// is a savepoint of that transaction instead: commit() keeps the message's writes in the batch
// (they become durable with the batch's commit), and a unit that does not commit undoes only
// its own writes and rows (rolled_back_to_savepoint), leaving the rest of the batch intact.
//
// Rolls back on destruction unless committed, including when an exception unwinds through it,
// and tells the sink either way, so a sink never keeps rows of a unit that did not commit.
#pragma once

#include <exception>
#include <string>

#include "edge/store/session_store.hpp"
#include "sink_writer.hpp"

namespace dsekp::edge {

/// Ends the open transaction of `store` with the rows of `sink` (may be null): the sink's
/// before_commit(), the commit, then committed() or rolled_back() (sink_writer.hpp). A failure
/// has rolled everything back.
inline StoreResult commit_with_sinks(SessionStore& store, SinkWriter* sink) noexcept {
  if (sink != nullptr && !sink->before_commit()) {
    std::string why;
    try {
      why = sink->refusal();
    } catch (...) {
      // Out of memory: the failure without its text.
    }
    (void)store.rollback();
    sink->rolled_back();
    return StoreResult{StoreStatus::storage_failure, StateCodecError::ok, std::move(why)};
  }
  StoreResult r;
  try {
    r = store.commit();  // a store must end its transaction whatever happens (SQLite's does)
  } catch (...) {
    try {
      if (store.in_transaction()) (void)store.rollback();
    } catch (...) {
      // Nothing more can be done: the commit is reported failed, the sinks forget the unit.
    }
    r = StoreResult{StoreStatus::storage_failure};
  }
  if (sink != nullptr) {
    if (r.ok()) {
      sink->committed();
    } else {
      sink->rolled_back();
    }
  }
  return r;
}

class WriteUnit {
 public:
  /// Begins the store transaction (or, in a batch, the savepoint); check status(). `sink` may
  /// be null (a unit without rows).
  WriteUnit(SessionStore& store, SinkWriter* sink)
      : store_(store), sink_(sink), nested_(store.in_transaction()) {
    begun_ = nested_ ? store_.savepoint() : store_.begin();
    if (nested_ && begun_.ok() && sink_ != nullptr) sink_->savepoint();
  }
  WriteUnit(const WriteUnit&) = delete;
  WriteUnit& operator=(const WriteUnit&) = delete;
  ~WriteUnit() {
    if (begun_.ok() && !done_) undo();
  }

  /// The result of begin().
  [[nodiscard]] const StoreResult& status() const noexcept { return begun_; }

  /// Hands `row` to the sink. false if there is no sink, or it refused or threw (the caller then
  /// lets the unit roll back); write_refusal() says which.
  [[nodiscard]] bool write(const AcceptedFrame& row) noexcept {
    try {
      if (sink_ == nullptr) {
        refusal_ = "no sink";
        return false;
      }
      if (sink_->write(row)) return true;
      refusal_ = "the sink refused the row";
    } catch (const std::exception& e) {
      note_refusal(e.what());
    } catch (...) {
      note_refusal("an exception that is not a std::exception");
    }
    return false;
  }

  /// Why the last write() failed, for the operator (the sink's exception text when it threw).
  [[nodiscard]] const std::string& write_refusal() const noexcept { return refusal_; }

  /// Commits the store transaction (in a batch: releases the savepoint, keeping the writes for
  /// the batch's commit); a failure has rolled the unit back (SessionStore contract).
  StoreResult commit() {
    if (!begun_.ok() || done_) return StoreResult{StoreStatus::transaction_misuse};
    done_ = true;
    if (nested_) {
      const StoreResult r = store_.release_savepoint();
      if (!r.ok() && sink_ != nullptr) sink_->rolled_back_to_savepoint();
      return r;
    }
    return commit_with_sinks(store_, sink_);
  }

 private:
  void undo() noexcept {
    if (nested_) {
      (void)store_.rollback_to_savepoint();
      if (sink_ != nullptr) sink_->rolled_back_to_savepoint();
    } else {
      (void)store_.rollback();
      if (sink_ != nullptr) sink_->rolled_back();
    }
  }

  void note_refusal(const char* what) noexcept {
    try {
      refusal_ = std::string("the sink refused the row: ") + what;
    } catch (...) {
      refusal_.clear();  // out of memory: no text
    }
  }

  SessionStore& store_;
  SinkWriter* sink_;
  bool nested_;
  StoreResult begun_;
  bool done_ = false;
  std::string refusal_;
};

}  // namespace dsekp::edge
