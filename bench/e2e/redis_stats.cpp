// Redis command counters through hiredis (see redis_stats.hpp).
#include "redis_stats.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <stdexcept>

namespace dsekp::bench::e2e {
namespace {

std::uint64_t to_u64(const std::string& text) {
  try {
    return std::stoull(text);
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

namespace {

/// PING (the edges' health probe on one server), CLUSTER INFO (the same on a cluster), INFO (ours)
/// and REPLCONF (a replica's acknowledgements to its primary): none is work for a frame.
bool is_housekeeping(const std::string& name) {
  return name == "ping" || name == "info" || name == "cluster|info" || name == "replconf";
}

}  // namespace

std::uint64_t RedisStats::work_commands() const {
  std::uint64_t n = 0;
  for (const auto& [name, count] : calls)
    if (!is_housekeeping(name)) n += count;
  return n;
}

RedisStats parse_redis_info(const std::string& text) {
  RedisStats s;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto colon = line.find(':');
    if (line.empty() || line[0] == '#' || colon == std::string::npos) continue;
    const std::string key = line.substr(0, colon), value = line.substr(colon + 1);
    if (key == "redis_version") {
      s.version = value;
    } else if (key == "total_commands_processed") {
      s.total_commands = to_u64(value);
    } else if (key.rfind("cmdstat_", 0) == 0 && value.rfind("calls=", 0) == 0) {
      // Names may contain '|' (subcommands, "cmdstat_client|setname"): kept as they are.
      s.calls[key.substr(8)] = to_u64(value.substr(6, value.find(',') - 6));
    }
  }
  return s;
}

RedisStats read_redis_stats(const std::string& host, int port) {
  const timeval timeout{2, 0};
  std::unique_ptr<redisContext, decltype(&redisFree)> c(
      redisConnectWithTimeout(host.c_str(), port, timeout), &redisFree);
  const std::string where = "Redis on " + host + ":" + std::to_string(port);
  if (!c) throw std::runtime_error(where + ": cannot allocate a hiredis context");
  if (c->err != 0) throw std::runtime_error(where + ": " + c->errstr);
  redisSetTimeout(c.get(), timeout);
  std::string text;
  for (const char* section : {"server", "stats", "commandstats"}) {
    auto* reply = static_cast<redisReply*>(redisCommand(c.get(), "INFO %s", section));
    if (reply == nullptr) throw std::runtime_error(where + ": INFO " + section + ": " + c->errstr);
    std::unique_ptr<redisReply, decltype(&freeReplyObject)> owned(reply, &freeReplyObject);
    if (reply->type == REDIS_REPLY_ERROR)
      throw std::runtime_error(where + ": INFO " + section + ": " + reply->str);
    if (reply->type == REDIS_REPLY_STRING) text.append(reply->str, reply->len);
    text += "\r\n";
  }
  return parse_redis_info(text);
}

RedisStats difference(const RedisStats& after, const RedisStats& before) {
  RedisStats d;
  d.version = after.version;
  d.total_commands = after.total_commands - std::min(after.total_commands, before.total_commands);
  for (const auto& [name, count] : after.calls) {
    const auto it = before.calls.find(name);
    const std::uint64_t was = it == before.calls.end() ? 0 : it->second;
    if (count > was) d.calls[name] = count - was;
  }
  return d;
}

nlohmann::ordered_json to_json(const RedisStats& s) {
  nlohmann::ordered_json calls = nlohmann::ordered_json::object();
  for (const auto& [name, count] : s.calls) calls[name] = count;
  return {{"total_commands_processed", s.total_commands},
          {"work_commands", s.work_commands()},
          {"calls", calls}};
}

}  // namespace dsekp::bench::e2e
