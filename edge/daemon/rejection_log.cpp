// RejectionLog (see rejection_log.hpp).
#include "edge/daemon/rejection_log.hpp"

#include <cstdio>
#include <string>

namespace dsekp::edge::daemon {

void RejectionLog::log(const HandleResult& r, std::string_view topic, std::uint64_t now_ms) {
  const std::size_t index = r.reason == EdgeReason::protocol_error
                                ? static_cast<std::size_t>(r.error)
                                : kErrorCount + static_cast<std::size_t>(r.reason);
  if (index >= slots_.size()) return;
  Slot& slot = slots_[index];
  const std::uint64_t second = now_ms / 1000;
  if (second != slot.second) {
    if (slot.suppressed > 0)
      std::fprintf(stderr, "dsekp edge: rejected %s: %llu more not logged\n", r.reason_name(),
                   static_cast<unsigned long long>(slot.suppressed));
    slot = Slot{second, 0, 0};
  }
  if (slot.lines >= per_second_) {
    ++slot.suppressed;
    return;
  }
  ++slot.lines;
  // The topic is bounded by the broker's limits but may hold anything: print it as data.
  const std::string shown(topic.substr(0, 128));
  std::fprintf(stderr, "dsekp edge: %s %s on \"%s\"%s%s\n",
               r.processed() ? "rejected" : "NOT PROCESSED", r.reason_name(), shown.c_str(),
               r.detail.empty() ? "" : ": ", r.detail.c_str());
}

}  // namespace dsekp::edge::daemon
