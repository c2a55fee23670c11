// RabbitMQ definitions from the registry (see rabbitmq_definitions.hpp).
#include "edge/broker_admin/rabbitmq_definitions.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include "crypto/openssl/openssl_crypto.hpp"
#include "edge/amqp/amqp_topics.hpp"
#include "edge/registry/broker_config.hpp"
#include "edge/registry/rabbitmq_password.hpp"
#include "edge/registry/republish_topics.hpp"
#include "edge/registry/secure_file.hpp"
#include "edge/registry/topic_prefix.hpp"

namespace dsekp::edge::broker_admin {
namespace {

/// The end of a pattern: PCRE's (RabbitMQ's) `$` also matches before a final newline, so a
/// routing key "dsekp.data.dev-a\n" would pass "...dev-a$".
constexpr const char* kEnd = "\\z";

/// `text` with every character a regex gives a meaning to escaped.
std::string escaped(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (std::string_view("\\^$.|?*+()[]{}/-").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

/// The levels of an MQTT filter.
std::vector<std::string_view> levels_of(std::string_view filter) {
  std::vector<std::string_view> levels;
  for (std::size_t at = 0;;) {
    const std::size_t slash = filter.find('/', at);
    levels.push_back(filter.substr(at, slash == std::string_view::npos ? slash : slash - at));
    if (slash == std::string_view::npos) return levels;
    at = slash + 1;
  }
}

/// One filter as a regex over routing keys (write) or binding keys (read), unanchored.
std::string filter_regex(std::string_view filter, TopicAccess access) {
  const std::vector<std::string_view> levels = levels_of(filter);
  std::string out;
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const std::string_view level = levels[i];
    const bool first = i == 0;
    if (level == "#") {
      // Any number of further levels, none included (MQTT's "a/#" also matches "a").
      out += first ? ".*" : "(?:\\..*)?";
      break;
    }
    if (!first) out += "\\.";
    if (level == "+") {
      // One level: a name, or in a binding key the '*' of a narrower filter.
      out += access == TopicAccess::read ? "(?:\\*|[^.*#]+)" : "[^.]+";
    } else {
      out += escaped(amqp::routing_key_of_topic(level));
    }
  }
  return out;
}

std::string tag_of(std::string_view role) {
  return "dsekp-" + std::string(role);
}

/// The MQTT plugin's session queues of the client id `user` (a device), or of the client ids
/// `user` and `user:<anything>` (an account: `dsekp edge send` runs as `<user>:<pid>`; ':' is in
/// no account or device name, so no other account's or device's queue has that form).
std::string session_queues(const std::string& user, bool device) {
  return "mqtt-subscription-" + escaped(user) + (device ? "" : "(?::[^:]*)?") + "qos[01]";
}

bool has_brace(std::string_view text) {
  return text.find_first_of("{}") != std::string_view::npos;
}

}  // namespace

std::string rabbitmq_topic_regex(const std::vector<TopicGrant>& grants, TopicAccess access) {
  std::string alternatives;
  for (const TopicGrant& g : grants) {
    if (g.access != access) continue;
    if (!alternatives.empty()) alternatives += '|';
    alternatives += filter_regex(g.filter, access);
  }
  return alternatives.empty() ? "^\\z" : "^(?:" + alternatives + ")" + kEnd;
}

RegistryStatus rabbitmq_definitions(const std::vector<BrokerAccount>& devices,
                                    const std::vector<ServiceAccount>& accounts,
                                    const RabbitMqDefinitionsOptions& options, Rng& rng,
                                    nlohmann::ordered_json& out) {
  if (has_brace(options.scope.topic_prefix) || has_brace(options.scope.republish_topic))
    return {RegistryErrc::invalid_argument,
            "RabbitMQ definitions: '{' or '}' in the topic prefix or republish topic (RabbitMQ "
            "would expand parts of the permission patterns)"};
  auto users = nlohmann::ordered_json::array();
  auto permissions = nlohmann::ordered_json::array();
  auto topic_permissions = nlohmann::ordered_json::array();
  const auto add = [&](const BrokerAccount& login, std::string_view role,
                       const std::vector<TopicGrant>& grants, bool consumes_queue) {
    if (has_brace(login.username))
      return RegistryStatus{
          RegistryErrc::invalid_argument,
          "RabbitMQ definitions: '{' or '}' in the user name \"" + login.username + "\""};
    std::string hash;
    if (auto s = rabbitmq_password_hash(login.password, rng, hash); !s.ok()) return s;
    users.push_back({{"name", login.username},
                     {"password_hash", hash},
                     {"hashing_algorithm", kRabbitMqHashingAlgorithm},
                     {"tags", nlohmann::ordered_json::array({tag_of(role)})}});
    std::string queues = session_queues(login.username, role == "device");
    if (consumes_queue) queues += "|" + escaped(options.edge_queue);
    const std::string own = "^(?:" + queues + ")" + kEnd;
    const std::string own_and_exchange =
        "^(?:" + escaped(options.exchange) + "|" + queues + ")" + kEnd;
    permissions.push_back({{"user", login.username},
                           {"vhost", options.vhost},
                           {"configure", own},
                           {"write", own_and_exchange},
                           {"read", own_and_exchange}});
    topic_permissions.push_back({{"user", login.username},
                                 {"vhost", options.vhost},
                                 {"exchange", options.exchange},
                                 {"write", rabbitmq_topic_regex(grants, TopicAccess::write)},
                                 {"read", rabbitmq_topic_regex(grants, TopicAccess::read)}});
    return RegistryStatus{};
  };
  // Edges also read the PSK baseline's topic when the baseline is off: an edge without it
  // unbinds its durable queue from that topic (a binding an earlier configuration may have
  // left), and RabbitMQ checks an unbind against the read pattern, unlike Mosquitto an
  // unsubscribe. An edge is trusted with every device's traffic anyway.
  GrantScope edge_scope = options.scope;
  edge_scope.psk_baseline = true;
  for (const ServiceAccount& a : accounts) {
    const bool edge = a.role == AccountRole::edge;
    if (auto s = add(a.login, account_role_name(a.role),
                     account_grants(a.role, edge ? edge_scope : options.scope), edge);
        !s.ok())
      return s;
  }
  for (const BrokerAccount& d : devices)
    if (auto s = add(d, "device", device_grants(d.username, options.scope), false); !s.ok())
      return s;
  out = {{"users", users},
         {"vhosts", nlohmann::ordered_json::array({{{"name", options.vhost}}})},
         {"permissions", permissions},
         {"topic_permissions", topic_permissions}};
  return {};
}

RegistryStatus write_rabbitmq_definitions(DeviceRegistry& registry, const std::string& path,
                                          RabbitMqDefinitionsOptions options,
                                          RabbitMqDefinitionsFile& out) {
  if (const std::string why = topic_prefix_problem(options.scope.topic_prefix); !why.empty())
    return {RegistryErrc::invalid_argument, why};
  if (const std::string why =
          republish_base_problem(options.scope.topic_prefix, options.scope.republish_topic);
      !why.empty())
    return {RegistryErrc::invalid_argument, why};
  if (auto s = registry.uplink_topics(options.scope.uplink_topics); !s.ok()) return s;
  std::vector<BrokerAccount> devices;
  if (auto s = registry.device_broker_accounts(devices); !s.ok()) return s;
  if (auto s = registry.set_edge_broker_user(options.edge_user, out.edge); !s.ok()) return s;
  if (auto s = ensure_downlink_account(registry); !s.ok()) return s;
  if (auto s = registry.accounts(out.accounts); !s.ok()) return s;
  OpenSslRng rng;
  nlohmann::ordered_json document;
  if (auto s = rabbitmq_definitions(devices, out.accounts, options, rng, document); !s.ok())
    return s;
  out.path = std::filesystem::absolute(path).string();
  if (auto s = write_file_atomically(out.path, document.dump(2) + "\n", 0600); !s.ok()) return s;
  out.devices = devices.size();
  out.conf_lines =
      "# rabbitmq.conf: MQTT logins only with the accounts of the definitions\n"
      "mqtt.allow_anonymous = false\n"
      "mqtt.vhost = " +
      options.vhost + "\n" + "mqtt.exchange = " + options.exchange + "\n" +
      "mqtt.durable_queue_type = quorum\n"
      "# the guest account only from loopback (better: rabbitmqctl delete_user guest)\n"
      "loopback_users.guest = true\n"
      "# REQUIRED: the AMQP listener only on an address the edges reach and the devices do not\n"
      "# (RabbitMQ's permissions cannot keep an AMQP client logged in with a device account\n"
      "# from routing any key into amq.topic: docs/SCALING.md, \"Accounts\"), e.g.\n"
      "# listeners.tcp.1 = 10.0.0.1:5672\n";
  return {};
}

RegistryStatus stale_rabbitmq_users(const std::string& list_users_json,
                                    const nlohmann::ordered_json& definitions,
                                    std::vector<std::string>& out) {
  out.clear();
  const auto listed = nlohmann::json::parse(list_users_json, nullptr, false);
  if (listed.is_discarded() || !listed.is_array())
    return {RegistryErrc::invalid_argument, "rabbitmqctl list_users: not a JSON array"};
  std::set<std::string> kept;
  if (definitions.contains("users") && definitions["users"].is_array())
    for (const auto& u : definitions["users"])
      if (u.contains("name") && u["name"].is_string()) kept.insert(u["name"].get<std::string>());
  for (const auto& u : listed) {
    if (!u.is_object() || !u.contains("user") || !u["user"].is_string())
      return {RegistryErrc::invalid_argument, "rabbitmqctl list_users: an entry without a user"};
    const std::string name = u["user"].get<std::string>();
    // Tags as a list (3.10's JSON formatter) or as one "a,b" string (older ones).
    std::vector<std::string> tags;
    if (u.contains("tags") && u["tags"].is_array()) {
      for (const auto& t : u["tags"])
        if (t.is_string()) tags.push_back(t.get<std::string>());
    } else if (u.contains("tags") && u["tags"].is_string()) {
      std::istringstream all(u["tags"].get<std::string>());
      for (std::string t; std::getline(all, t, ',');) tags.push_back(t);
    }
    const bool ours = std::any_of(tags.begin(), tags.end(),
                                  [](const std::string& t) { return t.starts_with("dsekp-"); });
    if (ours && kept.count(name) == 0) out.push_back(name);
  }
  return {};
}

}  // namespace dsekp::edge::broker_admin
