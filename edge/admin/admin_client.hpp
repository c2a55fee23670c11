// The command side of the admin requests (admin_protocol.hpp): connects to the broker as the
// edge account, subscribes to the request's result topic, publishes the request and waits for
// the daemon's answer. Synchronous, every step bounded by one deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "edge/admin/admin_protocol.hpp"

namespace dsekp::edge::admin {

struct AdminClientOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 1883;
  std::string username;  // empty: anonymous
  std::string password;
  std::string topic_prefix;
  std::chrono::milliseconds timeout{10000};  // for the whole exchange
};

/// Sends `request` and waits for its final result (admin_protocol.hpp: sent, expired or
/// refused), each result as it comes going to `on_result` if set. False with `error` when no
/// result came (broker unreachable or refusing the login, no edge running, timeout). True with
/// a refusal too, and with status queued when the timeout ends while the edge still holds it.
[[nodiscard]] bool request_downlink(
    const AdminClientOptions& options, const DownlinkRequest& request, DownlinkResult& result,
    std::string& error, const std::function<void(const DownlinkResult&)>& on_result = {});

}  // namespace dsekp::edge::admin
