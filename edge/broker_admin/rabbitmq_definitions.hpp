// RabbitMQ security for a DSEKP deployment on the clustered broker tier (RabbitMQ's MQTT plugin
// for the devices, AMQP for the edges: edge/amqp/), generated from the registry as a definitions
// document for `rabbitmqctl import_definitions`: the counterpart of broker_config.hpp's Mosquitto
// password and ACL files. Definitions are cluster-wide: one import on any node covers them all.
//
// Users: every device (user name = dev_id, its registry broker password) and every registry
// account (edges, readers, downlink senders), hashed as RabbitMQ does (rabbitmq_password.hpp),
// each tagged `dsekp-<role>` (no management tag: none of them may use the management API).
//
// What each may do is broker_grants.hpp's table, as RabbitMQ expresses it:
// - topic permissions on amq.topic (the MQTT plugin's exchange): `write` matches the routing
//   keys of the topics it may publish on, `read` the binding keys of the filters it may
//   subscribe to (amqp_topics.hpp's '/' <-> '.' swap; '+' is '*' in a binding key). Every user
//   gets one: RabbitMQ lets a user without any topic permission publish under every key.
//   Edges may also bind (and so unbind) the PSK baseline's topic when the baseline is off: an
//   edge unbinds it at start, and RabbitMQ checks that against the read pattern.
// - vhost permissions on resource names: publishing only to amq.topic (not to the default
//   exchange, which would reach the edges' queue under any key), and only the MQTT plugin's
//   session queues of its own client ids (`mqtt-subscription-<client id>qos0|1`): an account
//   that connects with another's client id cannot resume that session's queue (it would get the
//   other's queued ACKs). Edges also get their quorum queue (`--amqp-queue`).
//
// What RabbitMQ cannot be told at all: that a resource name is a queue and not an exchange.
// The account that may declare its session queue may declare an exchange of that name with
// amq.topic as its alternate exchange and so, over AMQP, route any key into amq.topic past the
// topic permissions (tests/broker_compat/rabbitmq_accounts_test.cpp shows it). So the AMQP
// listener must be where only the edges reach it; the printed configuration says so.
//
// What RabbitMQ 3.10 cannot be told either (Mosquitto's `use_username_as_clientid`): that a client
// id belongs to one account. An account connecting with another's client id still disconnects that
// client (RabbitMQ closes the older connection with the same id); it cannot publish or read
// anything under it. So a device's client id must be its user name (devices' are), an
// account's its user name or `<user name>:<anything>` (`dsekp edge send`: `<user>:<pid>`), and
// an account that abuses another's id is to be removed (`keys remove`, import, prune).
//
// Removal: an import adds and updates, it never deletes. `stale_rabbitmq_users` names the
// broker's `dsekp-*`-tagged users that the document no longer has, for `rabbitmqctl
// delete_user` (docs/EDGE.md gives the commands).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "dsekp/crypto.hpp"
#include "edge/registry/broker_grants.hpp"
#include "edge/registry/device_registry.hpp"

namespace dsekp::edge::broker_admin {

struct RabbitMqDefinitionsOptions {
  std::string edge_user;                    // the default edge account (recorded in the registry)
  GrantScope scope;                         // uplink_topics is taken from the registry
  std::string vhost = "/";                  // the MQTT plugin's `mqtt.vhost`
  std::string exchange = "amq.topic";       // the MQTT plugin's `mqtt.exchange`
  std::string edge_queue = "dsekp-uplink";  // the edges' `--amqp-queue`
};

/// The regex RabbitMQ matches against a routing key (write) or a binding key (read) for the
/// MQTT filters in `grants` of that access, anchored (`\z` at the end: PCRE's `$` would also
/// match before a final newline); "^\z" (no MQTT topic) if there are none.
[[nodiscard]] std::string rabbitmq_topic_regex(const std::vector<TopicGrant>& grants,
                                               TopicAccess access);

/// The definitions document for these devices and accounts. invalid_argument if a name or the
/// prefix holds '{' or '}' (RabbitMQ would expand "{username}"-like parts of a pattern).
RegistryStatus rabbitmq_definitions(const std::vector<BrokerAccount>& devices,
                                    const std::vector<ServiceAccount>& accounts,
                                    const RabbitMqDefinitionsOptions& options, Rng& rng,
                                    nlohmann::ordered_json& out);

struct RabbitMqDefinitionsFile {
  std::string path;        // absolute, mode 0600 (password hashes)
  std::string conf_lines;  // what rabbitmq.conf needs
  std::size_t devices = 0;
  BrokerAccount edge;                    // the default edge's login (its password is secret)
  std::vector<ServiceAccount> accounts;  // every non-device account written
};

/// Records `options.edge_user` as the default edge's broker user, adds the default downlink
/// account if the registry has none (as write_broker_config does), then writes the document
/// to `path` atomically with mode 0600.
RegistryStatus write_rabbitmq_definitions(DeviceRegistry& registry, const std::string& path,
                                          RabbitMqDefinitionsOptions options,
                                          RabbitMqDefinitionsFile& out);

/// The users of `list_users_json` (`rabbitmqctl list_users --formatter json`: [{"user", "tags"}])
/// tagged dsekp-* that `definitions` does not have. invalid_argument if the text is not that.
RegistryStatus stale_rabbitmq_users(const std::string& list_users_json,
                                    const nlohmann::ordered_json& definitions,
                                    std::vector<std::string>& out);

}  // namespace dsekp::edge::broker_admin
