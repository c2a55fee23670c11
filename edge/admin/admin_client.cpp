// request_downlink over libmosquitto (see admin_client.hpp). Drives the network loop itself
// (mosquitto_loop) until the answer or the deadline: no thread, nothing left running.
#include "edge/admin/admin_client.hpp"

#include <mosquitto.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace dsekp::edge::admin {
namespace {

struct Exchange {
  std::string result_topic;
  int connack = -1;  // -1: none yet
  bool subscribed = false;
  bool published = false;
  int request_mid = -1;
  std::vector<std::string> results;  // each result's JSON, in arrival order
};

void on_connect(mosquitto*, void* self, int rc) {
  static_cast<Exchange*>(self)->connack = rc;
}
void on_subscribe(mosquitto*, void* self, int, int count, const int* granted) {
  static_cast<Exchange*>(self)->subscribed = count == 1 && granted[0] <= 2;
}
void on_publish(mosquitto*, void* self, int mid) {
  auto* x = static_cast<Exchange*>(self);
  if (mid == x->request_mid) x->published = true;
}
void on_message(mosquitto*, void* self, const mosquitto_message* m) {
  auto* x = static_cast<Exchange*>(self);
  if (m->topic == nullptr || x->result_topic != m->topic) return;
  x->results.emplace_back(static_cast<const char*>(m->payload),
                          m->payloadlen < 0 ? 0 : static_cast<std::size_t>(m->payloadlen));
}

struct MosqDeleter {
  void operator()(mosquitto* m) const noexcept { mosquitto_destroy(m); }
};

}  // namespace

bool request_downlink(const AdminClientOptions& o, const DownlinkRequest& request,
                      DownlinkResult& result, std::string& error,
                      const std::function<void(const DownlinkResult&)>& on_result) {
  static std::once_flag once;
  std::call_once(once, [] { mosquitto_lib_init(); });
  Exchange x;
  x.result_topic = result_topic(o.topic_prefix, request.request_id);
  // "<user>:<pid>": a name of the account's own (':' is in no account or device name), so that
  // a broker that ties session queues to names (RabbitMQ, rabbitmq_definitions.hpp) lets it in,
  // and two sends at once do not take over each other's session.
  const std::string client_id = (o.username.empty() ? std::string("dsekp-admin") : o.username) +
                                ":" + std::to_string(::getpid());
  std::unique_ptr<mosquitto, MosqDeleter> mosq(mosquitto_new(client_id.c_str(), true, &x));
  if (!mosq) {
    error = "mosquitto_new failed";
    return false;
  }
  mosquitto_int_option(mosq.get(), MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311);
  mosquitto_connect_callback_set(mosq.get(), on_connect);
  mosquitto_subscribe_callback_set(mosq.get(), on_subscribe);
  mosquitto_publish_callback_set(mosq.get(), on_publish);
  mosquitto_message_callback_set(mosq.get(), on_message);
  if (!o.username.empty())
    mosquitto_username_pw_set(mosq.get(), o.username.c_str(), o.password.c_str());
  const auto deadline = std::chrono::steady_clock::now() + o.timeout;
  // Runs the loop until `done()`, an error or the deadline.
  const auto pump = [&](auto done, const char* waiting_for) {
    while (!done()) {
      if (std::chrono::steady_clock::now() >= deadline) {
        error = std::string("timed out waiting for ") + waiting_for;
        return false;
      }
      if (const int rc = mosquitto_loop(mosq.get(), 100, 1); rc != MOSQ_ERR_SUCCESS) {
        error = std::string("connection to the broker lost while waiting for ") + waiting_for +
                ": " + mosquitto_strerror(rc);
        return false;
      }
      if (x.connack > 0) {
        error = std::string("the broker refused the login: ") + mosquitto_connack_string(x.connack);
        return false;
      }
    }
    return true;
  };
  if (const int rc = mosquitto_connect(mosq.get(), o.host.c_str(), o.port, 30);
      rc != MOSQ_ERR_SUCCESS) {
    error = "cannot connect to " + o.host + ":" + std::to_string(o.port) + ": " +
            (rc == MOSQ_ERR_ERRNO ? std::string(std::strerror(errno)) : mosquitto_strerror(rc));
    return false;
  }
  if (!pump([&] { return x.connack == 0; }, "the broker's CONNACK")) return false;
  // Subscribed before asking, so the answer cannot pass by unseen.
  if (mosquitto_subscribe(mosq.get(), nullptr, x.result_topic.c_str(), 1) != MOSQ_ERR_SUCCESS ||
      !pump([&] { return x.subscribed; }, "the SUBACK"))
    return false;
  const std::string body = encode(request);
  const std::string topic = request_topic(o.topic_prefix);
  if (mosquitto_publish(mosq.get(), &x.request_mid, topic.c_str(), static_cast<int>(body.size()),
                        body.data(), 1, false) != MOSQ_ERR_SUCCESS) {
    error = "publishing the request failed";
    return false;
  }
  // Each result is parsed as it comes; a queued one means waiting on for the final one.
  std::size_t seen = 0;
  bool have = false;
  std::string bad;
  const auto final_result = [&] {
    for (; seen < x.results.size() && bad.empty(); ++seen) {
      DownlinkResult r;
      if (!parse(x.results[seen], r, bad)) break;
      result = std::move(r);
      have = true;
      if (on_result) on_result(result);
    }
    return !bad.empty() || (have && is_final(result.status));
  };
  const bool done = pump(final_result, "the edge's answer (is `dsekp edge` running?)");
  mosquitto_disconnect(mosq.get());
  if (!bad.empty()) {
    error = "bad answer from the edge: " + bad;
    return false;
  }
  if (!done && have) error.clear();  // timed out while the edge holds it: result says queued
  return done || have;
}

}  // namespace dsekp::edge::admin
