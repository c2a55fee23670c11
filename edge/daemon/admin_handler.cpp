// AdminHandler (see admin_handler.hpp).
#include "edge/daemon/admin_handler.hpp"

#include <utility>

#include "edge/admin/admin_protocol.hpp"
#include "edge/logging/edge_logger.hpp"
#include "edge/logging/printable.hpp"

namespace dsekp::edge::daemon {

AdminHandler::AdminHandler(EdgeService& service, const admin::AdminKey& key,
                           std::string topic_prefix, PublishFn publish)
    : service_(service),
      key_(key),
      prefix_(std::move(topic_prefix)),
      topic_(admin::request_topic(prefix_)),
      publish_(std::move(publish)) {}

std::string AdminHandler::handle(ByteView payload, std::uint64_t now_ms) {
  const std::string_view text(reinterpret_cast<const char*>(payload.data()), payload.size());
  admin::DownlinkRequest request;
  std::string error;
  const bool parsed = admin::parse(text, request, error);
  const auto send = [&](const std::string& json) {
    publish_(admin::result_topic(prefix_, request.request_id),
             ByteView(reinterpret_cast<const std::uint8_t*>(json.data()), json.size()));
    return json;
  };
  if (!parsed) {
    if (request.request_id.empty()) return "malformed admin request: " + error;
    admin::DownlinkResult refused;
    refused.request_id = request.request_id;
    refused.dev_id = request.dev_id;
    refused.reason = "bad_request";
    send(admin::encode(refused));
    return "malformed admin request: " + error;
  }
  // Refused before the MAC check: the parser keeps no oversized payload to check it over, and
  // the refusal seals, looks up and changes nothing.
  if (request.payload_too_large) {
    admin::DownlinkResult refused;
    refused.request_id = request.request_id;
    refused.dev_id = request.dev_id;
    refused.reason = error_name(Error::payload_too_large);
    return send(admin::encode(refused));
  }
  // Authenticated before anything is looked up or sealed (a forged request learns nothing).
  if (const admin::AdminVerdict v = admin::verify(key_, prefix_, request, now_ms);
      v != admin::AdminVerdict::ok) {
    admin::DownlinkResult refused;
    refused.request_id = request.request_id;
    refused.dev_id = request.dev_id;
    refused.reason = admin::admin_verdict_name(v);
    send(admin::encode(refused));
    return "refused admin request " + request.request_id + ": " + refused.reason;
  }
  if (const auto it = answered_.find(request.request_id); it != answered_.end())
    return send(it->second);  // a redelivery: the same answer, no second downlink

  if (before_seal_) before_seal_();
  const HandleResult r = service_.send_downlink(
      request.dev_id, ByteView(request.payload.data(), request.payload.size()), now_ms);
  if (r.downlink_seq_restored)
    logging::logger().warn("downlink: {}; no seq is used twice", logging::printable(r.detail));
  if (!r.ok() && !r.detail.empty())
    logging::logger().warn("downlink to {} refused ({}): {}", logging::printable(request.dev_id),
                           r.reason_name(), logging::printable(r.detail));
  admin::DownlinkResult result;
  result.request_id = request.request_id;
  result.dev_id = request.dev_id;
  result.ok = r.ok();
  result.reason = r.reason_name();
  if (r.ok()) {
    for (const Publish& p : r.publishes)
      publish_(p.topic, ByteView(p.payload.data(), p.payload.size()));
    result.seq = r.downlink_seq;
  }
  const std::string json = admin::encode(result);
  // A transient failure is not remembered: a retry with the same id may succeed.
  if (r.processed()) {
    answered_.emplace(request.request_id, json);
    order_.push_back(request.request_id);
    if (order_.size() > kRecentIds) {
      answered_.erase(order_.front());
      order_.pop_front();
    }
  }
  return send(json);
}

}  // namespace dsekp::edge::daemon
