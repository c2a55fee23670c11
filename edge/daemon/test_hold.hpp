// Fault injection for the durability test (tests/edge_daemon/kill_restart_test.cpp), off unless
// `dsekp edge --test-hold-ms MS` (a hidden flag) is given: the edge stops for MS at the three
// moments of a message where a crash matters, after printing which one, so the test can SIGKILL
// it exactly there:
//   "test hold: before"     delivered, nothing handled (no commit, no PUBACK)
//   "test hold: committed"  the SQLite unit committed, the CSV line not appended, no PUBACK
//                           (a sink placed before the CSV sink, so its committed() runs first)
//   "test hold: after"      everything done, the PUBACK still queued (written after on_message)
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>

#include "edge/service/sink_writer.hpp"

namespace dsekp::edge::daemon {

inline void test_hold(std::uint32_t ms, const char* moment) {
  if (ms == 0) return;
  std::fprintf(stderr, "dsekp edge: test hold: %s\n", moment);
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

class TestHoldSink final : public SinkWriter {
 public:
  explicit TestHoldSink(std::uint32_t ms) : ms_(ms) {}
  [[nodiscard]] bool write(const AcceptedFrame&) override { return true; }
  void committed() noexcept override { test_hold(ms_, "committed"); }

 private:
  std::uint32_t ms_;
};

}  // namespace dsekp::edge::daemon
