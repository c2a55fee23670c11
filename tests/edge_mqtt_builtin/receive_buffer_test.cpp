// The built-in MQTT client's receive buffer (edge/mqtt_builtin/receive_buffer.hpp): what is
// pending survives the moves that make room, and the storage grows only when it must.
#include "edge/mqtt_builtin/receive_buffer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace {

using dsekp::edge::mqtt_builtin::ReceiveBuffer;

void put(ReceiveBuffer& b, const std::string& s, std::size_t room) {
  const dsekp::MutableByteView r = b.room(room);
  ASSERT_GE(r.size(), std::max(room, s.size()));
  std::copy(s.begin(), s.end(), r.begin());
  b.produced(s.size());
}

std::string pending(const ReceiveBuffer& b) {
  return {b.pending().begin(), b.pending().end()};
}

TEST(ReceiveBuffer, PendingBytesSurviveTheMovesThatMakeRoom) {
  ReceiveBuffer b;
  put(b, "abcdef", 8);
  b.consume(4);
  EXPECT_EQ(pending(b), "ef");
  // Asking for more room than is left after the pending bytes moves them to the front.
  put(b, "ghij", 8);
  EXPECT_EQ(pending(b), "efghij");
  b.consume(6);
  EXPECT_TRUE(b.pending().empty());
  // Emptied, it starts again at the front: the same room needs no growth.
  const auto* front = b.room(8).data();
  put(b, "xy", 8);
  EXPECT_EQ(b.pending().data(), front);
  EXPECT_EQ(pending(b), "xy");
  b.clear();
  EXPECT_TRUE(b.pending().empty());
}

}  // namespace
