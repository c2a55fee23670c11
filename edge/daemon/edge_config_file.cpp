// read_config_file (see edge_config_file.hpp).
#include "edge/daemon/edge_config_file.hpp"

#include <toml++/toml.h>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <string_view>

namespace dsekp::edge::daemon {
namespace {

using Setter = std::function<void(const toml::node&, const std::string& key)>;

[[noreturn]] void bad(const std::string& key, const std::string& what) {
  throw std::runtime_error(key + ": " + what);
}

Setter text(std::string& out) {
  return [&out](const toml::node& n, const std::string& key) {
    const auto v = n.value_exact<std::string>();
    if (!v) bad(key, "expected a string");
    out = *v;
  };
}

Setter flag(bool& out) {
  return [&out](const toml::node& n, const std::string& key) {
    const auto v = n.value_exact<bool>();
    if (!v) bad(key, "expected true or false");
    out = *v;
  };
}

Setter number(std::uint32_t& out, std::uint32_t min = 0,
              std::uint32_t max = std::numeric_limits<std::uint32_t>::max()) {
  return [&out, min, max](const toml::node& n, const std::string& key) {
    const auto v = n.value_exact<std::int64_t>();
    if (!v) bad(key, "expected an integer");
    if (*v < min || *v > max)
      bad(key, "out of range " + std::to_string(min) + ".." + std::to_string(max));
    out = static_cast<std::uint32_t>(*v);
  };
}

// A name from a fixed list (log_format, log_level): `parse` says whether it is one, `refused`
// why not.
template <typename Value>
Setter choice(Value& out, bool (*parse)(std::string_view, Value&) noexcept,
              std::string (*refused)(std::string_view)) {
  return [&out, parse, refused](const toml::node& n, const std::string& key) {
    const auto v = n.value_exact<std::string>();
    if (!v) bad(key, "expected a string");
    if (!parse(*v, out)) bad(key, refused(*v));
  };
}

}  // namespace

void read_config_file(const std::string& path, EdgeDaemonOptions& o, std::string& broker) {
  toml::table table;
  try {
    table = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    const auto& at = e.source().begin;
    throw std::runtime_error(path + ":" + std::to_string(at.line) + ":" +
                             std::to_string(at.column) + ": " + std::string(e.description()));
  }
  std::string username;
  bool has_username = false;
  const std::map<std::string, Setter> keys = {
      {"broker", text(broker)},
      {"db", text(o.registry_db)},
      {"state_db", text(o.state_db)},
      {"downlink_journal", text(o.downlink_journal)},
      {"store", text(o.store)},
      {"store_password_file", text(o.store_password_file)},
      {"shared_group", text(o.shared_group)},
      {"downlink_lane", text(o.downlink_lane)},
      {"session_cache_devices", number(o.session_cache_devices, 0, 100'000'000)},
      {"logs_dir", text(o.logs_dir)},
      {"username",
       [&](const toml::node& n, const std::string& key) {
         text(username)(n, key);
         has_username = true;
       }},
      {"password", text(o.password)},
      {"password_file", text(o.password_file)},
      {"client_id", text(o.client_id)},
      {"metrics", text(o.metrics)},
      {"prefix", text(o.topic_prefix)},
      {"max_skew", number(o.max_skew_s)},
      {"ready_file", text(o.ready_file)},
      {"init_burst", number(o.init_burst)},
      {"init_refill_ms", number(o.init_refill_ms)},
      {"replay_window", number(o.replay_window, 1, ReplayWindow::kMaxSize)},
      {"batch_max", number(o.batch_max, 1, 65535)},
      {"batch_time_ms", number(o.batch_time_ms, 0, 60'000)},
      {"csv", flag(o.csv)},
      {"republish", flag(o.republish)},
      {"home_assistant", flag(o.home_assistant)},
      {"republish_topic", text(o.republish_topic)},
      {"republish_retain", flag(o.republish_retain)},
      {"downlink_queue_ttl", number(o.downlink_queue_ttl_s, 0, 7 * 86400)},
      {"retention_days", number(o.retention_days, 0, 36'500)},
      {"device_offline_after", number(o.device_offline_after_s, 1, 30 * 86400)},
      {"psk_baseline", flag(o.psk_baseline)},
      {"mqtt_version", text(o.mqtt_version)},
      {"tls_ca", text(o.tls_ca)},
      {"tls_cert", text(o.tls_cert)},
      {"tls_key", text(o.tls_key)},
      {"tls_insecure", flag(o.tls_insecure)},
      {"rejection_lines_per_second", number(o.rejection_lines_per_second, 1, 1'000'000)},
      {"log_format", choice(o.log_format, logging::parse_log_format, logging::log_format_error)},
      {"log_level", choice(o.log_level, logging::parse_log_level, logging::log_level_error)},
  };
  for (const auto& [key, node] : table) {
    const std::string name(key.str());
    const auto it = keys.find(name);
    try {
      if (it == keys.end()) bad(name, "unknown key");
      it->second(node, name);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(path + ": " + e.what());
    }
  }
  if (has_username) o.username = username;
}

}  // namespace dsekp::edge::daemon
