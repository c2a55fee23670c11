// The daemon's side of the admin requests (edge/admin/admin_protocol.hpp): a downlink request
// on {prefix}dsekp/admin/downlink, once its MAC and age check out (admin_auth.hpp; refused as
// unauthenticated, bad_mac or stale_request otherwise), is sealed by EdgeService::send_downlink
// (which commits the consumed seq before returning the frame), the frame is published, and the
// result goes back on the request's result topic. Runs on the MQTT loop thread like every other
// message, so the daemon stays the one writer of each device's state.
//
// A request id answered recently (the last kRecentIds) is answered again from memory and not
// sent twice: QoS 1 may redeliver a request. After a restart that memory is gone, so a request
// redelivered across a crash may be sent twice (each time with a fresh seq, never a reused one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "dsekp/bytes.hpp"
#include "edge/admin/admin_auth.hpp"
#include "edge/service/edge_service.hpp"

namespace dsekp::edge::daemon {

/// Publishes one message at QoS 1.
using PublishFn = std::function<void(const std::string& topic, ByteView payload)>;

class AdminHandler {
 public:
  static constexpr std::size_t kRecentIds = 1024;

  /// `key`: the registry's admin key; every request must carry its MAC (admin_auth.hpp).
  AdminHandler(EdgeService& service, const admin::AdminKey& key, std::string topic_prefix,
               PublishFn publish);
  ~AdminHandler() { secure_wipe(key_); }
  AdminHandler(const AdminHandler&) = delete;
  AdminHandler& operator=(const AdminHandler&) = delete;

  [[nodiscard]] const std::string& topic() const noexcept { return topic_; }
  /// Called once a request is authenticated, right before its downlink is sealed (the daemon
  /// ends its open batch there): a refused request costs the batch nothing.
  void set_before_seal(std::function<void()> before_seal) { before_seal_ = std::move(before_seal); }
  /// Handles one request payload received at `now_ms`. Returns the result it answered (or, for
  /// a request too malformed to answer, a result with an empty request_id), for logging.
  std::string handle(ByteView payload, std::uint64_t now_ms);

 private:
  EdgeService& service_;
  admin::AdminKey key_;
  std::string prefix_;
  std::string topic_;
  PublishFn publish_;
  std::function<void()> before_seal_;
  std::map<std::string, std::string> answered_;  // request id -> result JSON
  std::deque<std::string> order_;                // answered_ keys, oldest first
};

}  // namespace dsekp::edge::daemon
