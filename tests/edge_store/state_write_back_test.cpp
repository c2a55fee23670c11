// StateWriteBack on its own: entries per device, and savepoints that undo exactly the changes made
// since their mark, over several devices and repeated changes of one device; entries kept clean
// after a commit, and the dirty ones the next commit visits.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "edge/store/device_state_copy.hpp"
#include "edge/store/state_write_back.hpp"
#include "store_test_support.hpp"

namespace dsekp::edge::testing {
namespace {

void save(StateWriteBack& wb, const std::string& dev_id, std::uint32_t serial,
          std::uint64_t generation) {
  EdgeDeviceState state = make_rich_state(dev_id);
  state.next_session_serial = serial;
  wb.save(dev_id, state, 1, generation, 0);
}

std::uint32_t serial_of(const StateWriteBack& wb, const std::string& dev_id) {
  const StateWriteBack::Entry* e = wb.find(dev_id);
  return e == nullptr || e->removed() ? 0 : e->state->next_session_serial;
}

TEST(StateWriteBack, AnUndoneSavepointRestoresEveryDeviceItChangedAndNothingElse) {
  StateWriteBack wb;
  save(wb, "a", 10, 2);  // before any savepoint: part of the transaction
  wb.mark();
  save(wb, "a", 11, 3);
  save(wb, "b", 20, 2);
  wb.keep();
  EXPECT_EQ(serial_of(wb, "a"), 11u);
  EXPECT_EQ(serial_of(wb, "b"), 20u);

  wb.mark();
  save(wb, "a", 12, 4);
  save(wb, "a", 13, 5);  // twice in one savepoint: undo goes back past both
  wb.remove("b", 1);
  save(wb, "c", 30, 2);  // new in this savepoint: undo removes it
  EXPECT_TRUE(wb.find("b")->removed());
  wb.undo();
  EXPECT_EQ(serial_of(wb, "a"), 11u);
  EXPECT_EQ(wb.find("a")->generation, 3u);
  ASSERT_NE(wb.find("b"), nullptr);
  EXPECT_FALSE(wb.find("b")->removed());
  EXPECT_EQ(serial_of(wb, "b"), 20u);
  EXPECT_EQ(wb.find("c"), nullptr);

  // A removal then a new state of one device in one savepoint, kept.
  wb.mark();
  wb.remove("b", 1);
  save(wb, "b", 21, 1);
  wb.keep();
  EXPECT_FALSE(wb.find("b")->removed());
  EXPECT_EQ(serial_of(wb, "b"), 21u);

  int count = 0;
  wb.for_each_dirty([&](const std::string&, const StateWriteBack::Entry&) { ++count; });
  EXPECT_EQ(count, 2);
  wb.clear();
  EXPECT_TRUE(wb.empty());
  EXPECT_EQ(wb.find("a"), nullptr);
}

std::vector<std::string> dirty_of(StateWriteBack& wb) {
  std::vector<std::string> out;
  wb.for_each_dirty(
      [&](const std::string& dev_id, const StateWriteBack::Entry&) { out.push_back(dev_id); });
  return out;
}

TEST(StateWriteBack, ACommitKeepsCleanEntriesUpToTheBoundAndTheNextVisitsOnlyItsChanges) {
  StateWriteBack wb;
  save(wb, "a", 10, 2);
  save(wb, "b", 20, 1);
  wb.remove("c", 4);
  wb.committed(8);
  EXPECT_EQ(wb.find("c"), nullptr) << "a removal is not kept";
  ASSERT_NE(wb.find("a"), nullptr);
  EXPECT_FALSE(wb.find("a")->dirty);
  EXPECT_EQ(wb.find("a")->stored_generation, 2u) << "what the database now holds";
  EXPECT_TRUE(dirty_of(wb).empty());

  // A window moved in a kept entry makes it dirty once, with the next generation; a save of
  // another kept entry undone, then made again, is visited once.
  wb.mark_checked("a", 1);
  EdgeSession* found = wb.checked_session("a", 2, 1);
  ASSERT_NE(found, nullptr);
  EdgeSession& session = *found;
  const ReplayWindow before = session.uplink_window;
  ASSERT_EQ(session.uplink_window.accept(50), Error::ok);
  wb.window_moved("a", session, before, session.last_seen_ms);
  wb.window_moved("a", session, before, session.last_seen_ms);
  EXPECT_EQ(wb.find("a")->generation, 3u);
  wb.mark();
  save(wb, "b", 21, 2);
  wb.undo();
  EXPECT_FALSE(wb.find("b")->dirty) << "the kept entry is back";
  save(wb, "b", 22, 2);
  EXPECT_EQ(dirty_of(wb), (std::vector<std::string>{"a", "b"}));

  wb.committed(1);  // more than the bound: nothing is kept
  EXPECT_TRUE(wb.empty());
}

TEST(StateWriteBack, AnUndoWithoutAMarkChangesNothing) {
  StateWriteBack wb;
  save(wb, "a", 10, 2);
  wb.undo();
  EXPECT_EQ(serial_of(wb, "a"), 10u);
  wb.mark();
  wb.undo();
  wb.undo();  // a second undo of the same savepoint: nothing left to undo
  EXPECT_EQ(serial_of(wb, "a"), 10u);
}

}  // namespace
}  // namespace dsekp::edge::testing
