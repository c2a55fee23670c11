// StateWriteBack on its own: entries per device, and savepoints that undo exactly the changes made
// since their mark, over several devices and repeated changes of one device.
#include <gtest/gtest.h>

#include <string>

#include "edge/store/device_state_copy.hpp"
#include "edge/store/state_write_back.hpp"
#include "store_test_support.hpp"

namespace dsekp::edge::testing {
namespace {

StateWriteBack::Entry entry_of(const std::string& dev_id, std::uint32_t serial,
                               std::uint64_t generation) {
  StateWriteBack::Entry e;
  EdgeDeviceState state = make_rich_state(dev_id);
  state.next_session_serial = serial;
  copy_device_state(state, e.state);
  e.stored_generation = 1;
  e.generation = generation;
  return e;
}

StateWriteBack::Entry removal() {
  StateWriteBack::Entry e;
  e.removed = true;
  e.stored_generation = 1;
  return e;
}

std::uint32_t serial_of(const StateWriteBack& wb, const std::string& dev_id) {
  const StateWriteBack::Entry* e = wb.find(dev_id);
  return e == nullptr ? 0 : e->state.next_session_serial;
}

TEST(StateWriteBack, AnUndoneSavepointRestoresEveryDeviceItChangedAndNothingElse) {
  StateWriteBack wb;
  wb.put("a", entry_of("a", 10, 2));  // before any savepoint: part of the transaction
  wb.mark();
  wb.put("a", entry_of("a", 11, 3));
  wb.put("b", entry_of("b", 20, 2));
  wb.keep();
  EXPECT_EQ(serial_of(wb, "a"), 11u);
  EXPECT_EQ(serial_of(wb, "b"), 20u);

  wb.mark();
  wb.put("a", entry_of("a", 12, 4));
  wb.put("a", entry_of("a", 13, 5));  // twice in one savepoint: undo goes back past both
  wb.put("b", removal());
  wb.put("c", entry_of("c", 30, 2));  // new in this savepoint: undo removes it
  EXPECT_TRUE(wb.find("b")->removed);
  wb.undo();
  EXPECT_EQ(serial_of(wb, "a"), 11u);
  EXPECT_EQ(wb.find("a")->generation, 3u);
  ASSERT_NE(wb.find("b"), nullptr);
  EXPECT_FALSE(wb.find("b")->removed);
  EXPECT_EQ(serial_of(wb, "b"), 20u);
  EXPECT_EQ(wb.find("c"), nullptr);

  // A removal then a new state of one device in one savepoint, kept.
  wb.mark();
  wb.put("b", removal());
  wb.put("b", entry_of("b", 21, 1));
  wb.keep();
  EXPECT_FALSE(wb.find("b")->removed);
  EXPECT_EQ(serial_of(wb, "b"), 21u);

  int count = 0;
  wb.for_each([&](const std::string&, const StateWriteBack::Entry&) { ++count; });
  EXPECT_EQ(count, 2);
  wb.clear();
  EXPECT_TRUE(wb.empty());
  EXPECT_EQ(wb.find("a"), nullptr);
}

TEST(StateWriteBack, AnUndoWithoutAMarkChangesNothing) {
  StateWriteBack wb;
  wb.put("a", entry_of("a", 10, 2));
  wb.undo();
  EXPECT_EQ(serial_of(wb, "a"), 10u);
  wb.mark();
  wb.undo();
  wb.undo();  // a second undo of the same savepoint: nothing left to undo
  EXPECT_EQ(serial_of(wb, "a"), 10u);
}

}  // namespace
}  // namespace dsekp::edge::testing
