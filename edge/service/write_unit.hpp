// One unit of work of EdgeService: a session-store transaction and the sink rows written inside
// it, which commit together or not at all (sink_writer.hpp has the call sequence).
//
// Rolls back on destruction unless committed, including when an exception unwinds through it,
// and tells the sink either way, so a sink never keeps rows of a unit that did not commit.
#pragma once

#include "edge/store/session_store.hpp"
#include "sink_writer.hpp"

namespace dsekp::edge {

class WriteUnit {
 public:
  /// Begins the store transaction; check status(). `sink` may be null (a unit without rows).
  WriteUnit(SessionStore& store, SinkWriter* sink) : store_(store), sink_(sink) {
    begun_ = store_.begin();
  }
  WriteUnit(const WriteUnit&) = delete;
  WriteUnit& operator=(const WriteUnit&) = delete;
  ~WriteUnit() {
    if (begun_.ok() && !done_) {
      (void)store_.rollback();
      if (sink_ != nullptr) sink_->rolled_back();
    }
  }

  /// The result of begin().
  [[nodiscard]] const StoreResult& status() const noexcept { return begun_; }

  /// Hands `row` to the sink. false if there is no sink, or it refused or threw (the caller then
  /// lets the unit roll back).
  [[nodiscard]] bool write(const AcceptedFrame& row) noexcept {
    if (sink_ == nullptr) return false;
    try {
      return sink_->write(row);
    } catch (...) {
      return false;
    }
  }

  /// Commits the store transaction; a failed commit has rolled back (SessionStore contract).
  StoreResult commit() {
    if (!begun_.ok() || done_) return StoreResult{StoreStatus::transaction_misuse};
    done_ = true;
    const StoreResult r = store_.commit();
    if (sink_ != nullptr) {
      if (r.ok()) {
        sink_->committed();
      } else {
        sink_->rolled_back();
      }
    }
    return r;
  }

 private:
  SessionStore& store_;
  SinkWriter* sink_;
  StoreResult begun_;
  bool done_ = false;
};

}  // namespace dsekp::edge
