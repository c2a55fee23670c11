// AdminHandler (see admin_handler.hpp).
#include "edge/daemon/admin_handler.hpp"

#include <utility>

#include "dsekp/wiped_on_exit.hpp"
#include "edge/admin/admin_protocol.hpp"
#include "edge/logging/edge_logger.hpp"
#include "edge/logging/printable.hpp"
#include "edge/registry/text_encoding.hpp"

namespace dsekp::edge::daemon {
namespace {

admin::DownlinkResult refusal(const admin::DownlinkRequest& request, std::string reason) {
  admin::DownlinkResult r;
  r.request_id = request.request_id;
  r.dev_id = request.dev_id;
  r.reason = std::move(reason);
  return r;
}

}  // namespace

AdminHandler::AdminHandler(EdgeService& service, const admin::AdminKey& key,
                           AdminHandlerOptions options, PublishFn publish)
    : service_(service),
      key_(key),
      options_(std::move(options)),
      topic_(admin::request_topic(options_.topic_prefix)),
      publish_(std::move(publish)) {}

std::string AdminHandler::handle(ByteView payload, const RequestProperties& properties,
                                 std::uint64_t now_ms) {
  const std::string_view text(reinterpret_cast<const char*>(payload.data()), payload.size());
  admin::DownlinkRequest request;
  // The command is in clear once verify() opened it: wiped however this returns (a held copy
  // wipes itself, downlink_queue.hpp).
  const WipedOnExit wipe_payload{request.payload};
  std::string error;
  const bool parsed = admin::parse(text, request, error);
  std::lock_guard lock(mutex_);
  // Where the results go: the request's own MQTT 5 response topic if it is one the edge may
  // answer on, else the default.
  ResultAddress to{admin::result_topic(options_.topic_prefix, request.request_id), {}};
  std::string address_problem;
  if (!properties.response_topic.empty()) {
    if (!admin::valid_response_topic(options_.topic_prefix, properties.response_topic))
      address_problem = "bad_response_topic";
    else if (properties.correlation_data.size() > admin::kMaxCorrelationData)
      address_problem = "bad_request";
    else
      to = {std::string(properties.response_topic),
            {properties.correlation_data.begin(), properties.correlation_data.end()}};
  }
  // Without a request id the default topic has nowhere to go: only a response topic can answer.
  const bool answerable = !request.request_id.empty() ||
                          (!properties.response_topic.empty() && address_problem.empty());
  if (!parsed) {
    if (answerable) answer(refusal(request, "bad_request"), to, false);
    return "malformed admin request: " + error;
  }
  if (!address_problem.empty()) return answer(refusal(request, address_problem), to, false);
  // Refused before the MAC check: the parser keeps no oversized payload to check it over, and
  // the refusal seals, looks up and changes nothing.
  if (request.payload_too_large)
    return answer(refusal(request, error_name(Error::payload_too_large)), to, false);
  // Authenticated before anything is looked up, held or sealed (a forged request learns
  // nothing).
  if (const admin::AdminVerdict v = admin::verify(key_, options_.topic_prefix, request, now_ms);
      v != admin::AdminVerdict::ok) {
    answer(refusal(request, admin::admin_verdict_name(v)), to, false);
    return "refused admin request " + request.request_id + ": " + admin::admin_verdict_name(v);
  }
  if (const auto it = answered_.find(request.request_id); it != answered_.end()) {
    publish_(to.topic, bytes_of(it->second),
             ByteView(to.correlation_data.data(), to.correlation_data.size()));
    return it->second;  // a redelivery: the same answer, no second downlink
  }
  const ByteView plaintext(request.payload.data(), request.payload.size());
  const bool may_hold = options_.queue_ttl_ms > 0;
  if (may_hold && !options_.known(request.dev_id))
    return answer(refusal(request, error_name(Error::unknown_device)), to, true);
  if (!may_hold || options_.online(request.dev_id, now_ms)) {
    const Sealed s = seal(request.request_id, request.dev_id, plaintext, now_ms);
    if (!s.no_session || !may_hold) return answer(s.result, to, !s.transient);
  }
  if (!queue_.push({request.request_id, request.dev_id, request.payload, to,
                    now_ms + options_.queue_ttl_ms}))
    return answer(refusal(request, "queue_full"), to, false);
  admin::DownlinkResult held = refusal(request, "ok");
  held.status = admin::DownlinkStatus::queued;
  return answer(held, to, true);
}

AdminHandler::Sealed AdminHandler::seal(const std::string& request_id, const std::string& dev_id,
                                        ByteView payload, std::uint64_t now_ms) {
  if (before_seal_) before_seal_();
  const HandleResult r = service_.send_downlink(dev_id, payload, now_ms);
  if (r.downlink_seq_restored)
    logging::logger().warn("downlink: {}; no seq is used twice", logging::printable(r.detail));
  Sealed s;
  s.result.request_id = request_id;
  s.result.dev_id = dev_id;
  s.result.reason = r.reason_name();
  s.no_session = r.reason == EdgeReason::protocol_error && r.error == Error::no_session;
  s.transient = !r.processed();
  if (!r.ok()) {
    if (!r.detail.empty())
      logging::logger().warn("downlink to {} refused ({}): {}", logging::printable(dev_id),
                             r.reason_name(), logging::printable(r.detail));
    return s;
  }
  for (const Publish& p : r.publishes)
    publish_(p.topic, ByteView(p.payload.data(), p.payload.size()), {});
  s.result.status = admin::DownlinkStatus::sent;
  s.result.seq = r.downlink_seq;
  return s;
}

std::string AdminHandler::answer(const admin::DownlinkResult& result, const ResultAddress& to,
                                 bool remember) {
  const std::string json = admin::encode(result);
  publish_(to.topic, bytes_of(json),
           ByteView(to.correlation_data.data(), to.correlation_data.size()));
  if (!remember || result.request_id.empty()) return json;
  if (answered_.insert_or_assign(result.request_id, json).second) {
    order_.push_back(result.request_id);
    if (order_.size() > kRecentIds) {
      answered_.erase(order_.front());
      order_.pop_front();
    }
  }
  return json;
}

bool AdminHandler::holds(const std::string& dev_id) {
  std::lock_guard lock(mutex_);
  return queue_.holds(dev_id);
}

void AdminHandler::deliver(const std::string& dev_id, std::uint64_t now_ms) {
  std::lock_guard lock(mutex_);
  std::deque<QueuedDownlink> held = queue_.take(dev_id);
  while (!held.empty()) {
    const QueuedDownlink& d = held.front();
    const Sealed s =
        seal(d.request_id, d.dev_id, ByteView(d.payload.data(), d.payload.size()), now_ms);
    // Still between a rekey and its confirmation, or the store failed: kept for the next frame.
    if (s.no_session || s.transient) break;
    logging::logger().info("admin downlink (held): {}", answer(s.result, d.reply_to, true));
    held.pop_front();
  }
  queue_.put_back(dev_id, std::move(held));
}

void AdminHandler::expire(std::uint64_t now_ms) {
  std::lock_guard lock(mutex_);
  for (const QueuedDownlink& d : queue_.expire(now_ms)) {
    admin::DownlinkResult r;
    r.request_id = d.request_id;
    r.dev_id = d.dev_id;
    r.status = admin::DownlinkStatus::expired;
    r.reason = "expired";
    logging::logger().info("admin downlink (held): {}", answer(r, d.reply_to, true));
  }
}

std::size_t AdminHandler::queued() {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

}  // namespace dsekp::edge::daemon
