// The dynamic-security admin connection over libmosquitto (see dynsec_connection.hpp).
#include "edge/broker_admin/dynsec_connection.hpp"

#include <arpa/inet.h>
#include <mosquitto.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "edge/mqtt/mqtt_limits.hpp"

namespace dsekp::edge::broker_admin {
namespace {

using nlohmann::json;

constexpr const char* kCommandTopic = "$CONTROL/dynamic-security/v1";
constexpr const char* kResponseTopic = "$CONTROL/dynamic-security/v1/response";
// Room left under the broker's max_packet_size for the fixed header and the topic.
constexpr std::size_t kMaxCommandPayload = mqtt::kMaxMqttPacketSize - 256;

RegistryStatus broker_error(std::string message) {
  return {RegistryErrc::broker, std::move(message)};
}

}  // namespace

struct PluginConnection::State {
  mosquitto* mosq = nullptr;
  int connack = -1;  // -1: none yet
  bool subscribed = false;
  std::string correlation;  // of the request in flight
  std::size_t expected = 0;
  bool answered = false;
  json answer;

  ~State() {
    if (mosq != nullptr) {
      mosquitto_disconnect(mosq);
      mosquitto_destroy(mosq);
    }
  }

  // Ours: one response per command, each with our correlation data.
  void take(const mosquitto_message* m) {
    if (answered || m->topic == nullptr || std::strcmp(m->topic, kResponseTopic) != 0) return;
    const auto* p = static_cast<const char*>(m->payload);
    json doc = json::parse(p, p + (m->payloadlen < 0 ? 0 : m->payloadlen), nullptr, false);
    if (!doc.is_object() || !doc.contains("responses") || !doc["responses"].is_array()) return;
    const json& responses = doc["responses"];
    if (responses.size() != expected) return;
    for (const json& r : responses)
      if (!r.is_object() || r.value("correlationData", std::string()) != correlation) return;
    answer = std::move(doc);
    answered = true;
  }
};

bool is_loopback_host(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return ::inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

PluginConnection::PluginConnection(const PluginEndpoint& endpoint, std::unique_ptr<State> state)
    : endpoint_(endpoint), state_(std::move(state)) {}

PluginConnection::~PluginConnection() = default;

template <typename Done>
RegistryStatus PluginConnection::pump(Done done, const char* waiting_for) {
  const auto deadline = std::chrono::steady_clock::now() + endpoint_.timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline)
      return broker_error(std::string("timed out waiting for ") + waiting_for);
    const int rc = mosquitto_loop(state_->mosq, 100, 1);
    // A refused CONNACK closes the connection too: its reason is the one to report.
    if (state_->connack > 0)
      return broker_error(std::string("the broker refused the admin login \"") +
                          endpoint_.admin.username +
                          "\": " + mosquitto_connack_string(state_->connack));
    if (rc != MOSQ_ERR_SUCCESS)
      return broker_error(std::string("the broker closed the admin connection while waiting for ") +
                          waiting_for + ": " + mosquitto_strerror(rc) +
                          (state_->connack == 0
                               ? " (the broker ties client ids to user names: another session "
                                 "of \"" +
                                     endpoint_.admin.username +
                                     "\", e.g. mosquitto_ctrl, takes this one over)"
                               : std::string()));
  }
  return {};
}

RegistryStatus PluginConnection::open(const PluginEndpoint& endpoint,
                                      std::unique_ptr<PluginConnection>& out) {
  if (!is_loopback_host(endpoint.host))
    return {RegistryErrc::invalid_argument,
            "the dynamic-security broker must be on this machine (127.0.0.1, ::1 or "
            "localhost): the admin and account passwords would cross the network in clear, \"" +
                endpoint.host + "\" is not a loopback address"};
  static std::once_flag once;
  std::call_once(once, [] { mosquitto_lib_init(); });
  auto state = std::make_unique<State>();
  const std::string client_id = "dsekp-keys-" + std::to_string(::getpid());
  state->mosq = mosquitto_new(client_id.c_str(), true, state.get());
  if (state->mosq == nullptr) return broker_error("mosquitto_new failed");
  mosquitto_int_option(state->mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311);
  mosquitto_connect_callback_set(
      state->mosq, [](mosquitto*, void* self, int rc) { static_cast<State*>(self)->connack = rc; });
  mosquitto_subscribe_callback_set(
      state->mosq, [](mosquitto*, void* self, int, int count, const int* granted) {
        static_cast<State*>(self)->subscribed = count == 1 && granted[0] <= 2;
      });
  mosquitto_message_callback_set(state->mosq,
                                 [](mosquitto*, void* self, const mosquitto_message* m) {
                                   static_cast<State*>(self)->take(m);
                                 });
  mosquitto_username_pw_set(state->mosq, endpoint.admin.username.c_str(),
                            endpoint.admin.password.c_str());
  const std::string where = endpoint.host + ":" + std::to_string(endpoint.port);
  if (const int rc = mosquitto_connect(state->mosq, endpoint.host.c_str(), endpoint.port, 30);
      rc != MOSQ_ERR_SUCCESS)
    return broker_error(
        "cannot connect to the broker at " + where + ": " +
        (rc == MOSQ_ERR_ERRNO ? std::string(std::strerror(errno)) : mosquitto_strerror(rc)));
  std::unique_ptr<PluginConnection> connection(new PluginConnection(endpoint, std::move(state)));
  State& s = *connection->state_;
  if (auto st = connection->pump([&] { return s.connack == 0; }, "the broker's CONNACK"); !st.ok())
    return st;
  // Subscribed before the first command, so no answer can pass by unseen. A broker without the
  // plugin, or an admin without its role, grants this subscription but never answers: the first
  // request then times out with a message that says so.
  if (mosquitto_subscribe(s.mosq, nullptr, kResponseTopic, 1) != MOSQ_ERR_SUCCESS)
    return broker_error("subscribing to the plugin's answers failed");
  if (auto st = connection->pump([&] { return s.subscribed; }, "the SUBACK"); !st.ok()) return st;
  if (!s.subscribed)
    return broker_error("the broker refused the subscription to " + std::string(kResponseTopic) +
                        ": is \"" + endpoint.admin.username +
                        "\" the dynamic-security plugin's admin?");
  out = std::move(connection);
  return {};
}

RegistryStatus PluginConnection::run_one_message(const std::vector<json>& commands,
                                                 std::vector<json>& responses) {
  static std::atomic<unsigned> counter{0};
  State& s = *state_;
  s.correlation = "dsekp-" + std::to_string(::getpid()) + "-" + std::to_string(++counter) + "-" +
                  std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  json message{{"commands", json::array()}};
  for (const json& c : commands) {
    json tagged = c;
    tagged["correlationData"] = s.correlation;
    message["commands"].push_back(std::move(tagged));
  }
  const std::string body = message.dump();
  if (body.size() > kMaxCommandPayload)
    return broker_error("a dynamic-security command of " + std::to_string(body.size()) +
                        " bytes exceeds the broker's packet cap");
  s.expected = commands.size();
  s.answered = false;
  if (mosquitto_publish(s.mosq, nullptr, kCommandTopic, static_cast<int>(body.size()), body.data(),
                        1, false) != MOSQ_ERR_SUCCESS)
    return broker_error("publishing to " + std::string(kCommandTopic) + " failed");
  if (auto st = pump([&] { return s.answered; },
                     "the dynamic-security plugin's answer (does the broker load "
                     "mosquitto_dynamic_security.so, and is the login its admin?)");
      !st.ok())
    return st;
  for (json& r : s.answer["responses"]) responses.push_back(std::move(r));
  return {};
}

RegistryStatus PluginConnection::run(const std::vector<json>& commands,
                                     std::vector<json>& responses) {
  responses.clear();
  std::vector<json> batch;
  std::size_t batch_bytes = 0;
  for (const json& c : commands) {
    const std::size_t size = c.dump().size() + 64;  // with its correlation data
    if (!batch.empty() && batch_bytes + size > kMaxCommandPayload) {
      if (auto s = run_one_message(batch, responses); !s.ok()) return s;
      batch.clear();
      batch_bytes = 0;
    }
    batch.push_back(c);
    batch_bytes += size;
  }
  if (!batch.empty()) return run_one_message(batch, responses);
  return {};
}

}  // namespace dsekp::edge::broker_admin
