// Fault injection for the durability test (tests/edge_daemon/kill_restart_test.cpp), off unless
// `dsekp edge --test-hold-ms MS` (a hidden flag) is given: the edge stops for MS at the
// moments of a message where a crash matters, after logging which one (at info), so the test can
// SIGKILL it exactly there:
//   "test hold: before"     a message delivered, not handled; the earlier messages of its batch
//                           handled but not committed (no PUBACK of the batch written)
//   "test hold: redis committed"  with --store redis only: the batch's states and its rows'
//                           write-ahead committed in Redis, the local SQLite commit not yet
//                           made (SplitSessionStore's between-commits hook; only for a batch
//                           that wrote rows)
//   "test hold: appended"   the batch's CSV lines appended, its SQLite transaction (with the
//                           CSV files' new ends) not committed (a sink placed after the CSV sink,
//                           holding in before_commit(); only for a batch that stored rows)
//   "test hold: committed"  the batch (one SQLite transaction) committed, no PUBACK written (a
//                           sink's committed(); only for a batch that stored rows)
//   "test hold: after"      the batch's end: all done, its PUBACKs still queued (written by the
//                           MQTT loop after the batch end)
// A hold is longer than the default --batch-time-ms, so a burst then ends after one message (as
// before batches); with --batch-time-ms 0 a batch takes in what arrived during the holds.
#pragma once

#include <chrono>
#include <cstdint>
#include <thread>

#include "edge/logging/edge_logger.hpp"
#include "edge/service/sink_writer.hpp"

namespace dsekp::edge::daemon {

inline void test_hold(std::uint32_t ms, const char* moment) {
  if (ms == 0) return;
  logging::logger().info("test hold: {}", moment);
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

class TestHoldSink final : public SinkWriter {
 public:
  enum class Moment : std::uint8_t { appended, committed };
  TestHoldSink(std::uint32_t ms, Moment moment) : ms_(ms), moment_(moment) {}
  [[nodiscard]] bool write(const AcceptedFrame&) override {
    ++rows_;
    return true;
  }
  // Only a unit (batch) that holds rows: a batch of refusals has nothing to lose.
  [[nodiscard]] bool before_commit() noexcept override {
    if (rows_ > 0 && moment_ == Moment::appended) test_hold(ms_, "appended");
    return true;
  }
  void committed() noexcept override {
    if (rows_ > 0 && moment_ == Moment::committed) test_hold(ms_, "committed");
    rows_ = 0;
  }
  void rolled_back() noexcept override { rows_ = 0; }
  void savepoint() noexcept override { mark_ = rows_; }
  void rolled_back_to_savepoint() noexcept override { rows_ = mark_; }

 private:
  std::uint32_t ms_;
  Moment moment_;
  std::size_t rows_ = 0;  // rows written in the open unit
  std::size_t mark_ = 0;
};

}  // namespace dsekp::edge::daemon
