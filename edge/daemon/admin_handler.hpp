// The daemon's side of the admin requests (edge/admin/admin_protocol.hpp). A downlink request
// on {prefix}dsekp/admin/downlink, once its MAC and age check out (admin_auth.hpp; refused as
// unauthenticated, bad_mac or stale_request otherwise) and its device is known:
//   * device online (an accepted frame within --device-offline-after): sealed now by
//     EdgeService::send_downlink (which commits the consumed seq before returning the frame),
//     published, answered "sent";
//   * device offline, or between a rekey and its confirmation (no_session): held unsealed in
//     the DownlinkQueue and answered "queued"; deliver() seals and sends it after the device's
//     next accepted frame and answers "sent"; expire() answers "expired" once its time is up.
// With queue_ttl_ms 0 nothing is held: every request is sealed and sent at once, whatever the
// device's state (and a no_session is refused).
// Runs on the MQTT loop thread like every other message, so the daemon stays the one writer of
// each device's state; expire() may run on another thread (it seals nothing).
//
// A request id answered recently (the last kRecentIds) is answered again from memory and not
// sent or held twice: QoS 1 may redeliver a request. After a restart that memory is gone, so a
// request redelivered across a crash may be sent twice (each time with a fresh seq, never a
// reused one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "dsekp/bytes.hpp"
#include "edge/admin/admin_auth.hpp"
#include "edge/daemon/downlink_queue.hpp"
#include "edge/service/edge_service.hpp"

namespace dsekp::edge::daemon {

/// Publishes one message at QoS 1, with MQTT 5 correlation data when not empty.
using PublishFn =
    std::function<void(const std::string& topic, ByteView payload, ByteView correlation_data)>;

struct AdminHandlerOptions {
  std::string topic_prefix;
  /// How long a request for an offline device is held (0: never held).
  std::uint64_t queue_ttl_ms = 3'600'000;
  /// Whether the registry has the device (loop thread).
  std::function<bool(const std::string& dev_id)> known;
  /// Whether the device sent an accepted frame recently enough to count as online.
  std::function<bool(const std::string& dev_id, std::uint64_t now_ms)> online;
};

/// The MQTT 5 properties of a request that matter here.
struct RequestProperties {
  std::string_view response_topic;  // "": the default result topic
  ByteView correlation_data;
};

class AdminHandler {
 public:
  static constexpr std::size_t kRecentIds = 1024;

  /// `key`: the registry's admin key; every request must carry its MAC (admin_auth.hpp).
  AdminHandler(EdgeService& service, const admin::AdminKey& key, AdminHandlerOptions options,
               PublishFn publish);
  ~AdminHandler() { secure_wipe(key_); }
  AdminHandler(const AdminHandler&) = delete;
  AdminHandler& operator=(const AdminHandler&) = delete;

  [[nodiscard]] const std::string& topic() const noexcept { return topic_; }
  /// Called once a request is to be sealed, right before (the daemon ends its open batch
  /// there): a refused or held request costs the batch nothing.
  void set_before_seal(std::function<void()> before_seal) { before_seal_ = std::move(before_seal); }
  /// Handles one request payload received at `now_ms`. Returns the result it answered (or, for
  /// a request too malformed to answer, why), for logging.
  std::string handle(ByteView payload, const RequestProperties& properties, std::uint64_t now_ms);
  /// Whether requests are held for `dev_id` (cheap: the daemon asks after each accepted frame).
  [[nodiscard]] bool holds(const std::string& dev_id);
  /// Seals and sends what is held for `dev_id` (outside any open batch), answering each.
  void deliver(const std::string& dev_id, std::uint64_t now_ms);
  /// Answers "expired" for what was held too long. Any thread.
  void expire(std::uint64_t now_ms);
  [[nodiscard]] std::size_t queued();

 private:
  struct Sealed {
    admin::DownlinkResult result;  // sent or refused
    bool no_session = false;       // refused as no_session: may be held instead
    bool transient = false;        // a store failure: a retry may succeed
  };
  /// Seals and publishes now.
  Sealed seal(const std::string& request_id, const std::string& dev_id, ByteView payload,
              std::uint64_t now_ms);
  /// Publishes `result` to `to`; with `remember`, a redelivered request gets it again (not for
  /// a transient failure, which a retry may fix, nor a refusal before authentication, so that a
  /// forger cannot fill the memory).
  std::string answer(const admin::DownlinkResult& result, const ResultAddress& to, bool remember);

  EdgeService& service_;
  admin::AdminKey key_;
  AdminHandlerOptions options_;
  std::string topic_;
  PublishFn publish_;
  std::function<void()> before_seal_;
  std::mutex mutex_;  // the queue and the answered requests (expire() runs on another thread)
  DownlinkQueue queue_{admin::kMaxQueuedPerDevice, admin::kMaxQueued};
  std::map<std::string, std::string> answered_;  // request id -> last result JSON
  std::deque<std::string> order_;                // answered_ keys, oldest first
};

}  // namespace dsekp::edge::daemon
