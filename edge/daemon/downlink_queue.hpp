// The downlink requests the edge holds for a device that is offline (edge/admin/
// admin_protocol.hpp, status "queued"): unsealed, so that no seq is consumed under a session the
// device may have replaced by the time it comes back; sealed when it next sends.
//
// Bounded: at most admin::kMaxQueuedPerDevice per device and admin::kMaxQueued in all (a full
// queue refuses the request as queue_full), each for at most its time to live. In memory only:
// the requests still held when the edge stops are lost (documented in admin_protocol.hpp).
// Not thread-safe: AdminHandler serialises it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "dsekp/bytes.hpp"

namespace dsekp::edge::daemon {

/// Where a request's results go: its topic, and the MQTT 5 correlation data to send back.
struct ResultAddress {
  std::string topic;
  std::vector<std::uint8_t> correlation_data;
};

struct QueuedDownlink {
  std::string request_id;
  std::string dev_id;
  std::vector<std::uint8_t> payload;  // the command in clear: wiped with every copy
  ResultAddress reply_to;
  std::uint64_t expires_ms = 0;
  ~QueuedDownlink() { secure_wipe(payload); }
};

class DownlinkQueue {
 public:
  DownlinkQueue(std::size_t per_device, std::size_t total)
      : per_device_(per_device), total_(total) {}

  /// Holds `d`; false (and nothing held) if the device's share or the whole queue is full.
  [[nodiscard]] bool push(QueuedDownlink d);
  /// Whether anything is held for `dev_id`.
  [[nodiscard]] bool holds(const std::string& dev_id) const {
    return by_device_.count(dev_id) != 0;
  }
  /// Takes everything held for `dev_id`, oldest first.
  [[nodiscard]] std::deque<QueuedDownlink> take(const std::string& dev_id);
  /// Puts back what take() returned and could not be sent yet, ahead of anything newer.
  void put_back(const std::string& dev_id, std::deque<QueuedDownlink> held);
  /// Takes every request whose time ran out by `now_ms`.
  [[nodiscard]] std::vector<QueuedDownlink> expire(std::uint64_t now_ms);
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  std::size_t per_device_;
  std::size_t total_;
  std::size_t size_ = 0;
  std::map<std::string, std::deque<QueuedDownlink>> by_device_;
};

}  // namespace dsekp::edge::daemon
