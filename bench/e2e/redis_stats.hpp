// What a private Redis has done, read with short hiredis calls (`INFO server`, `INFO stats`
// and `INFO commandstats`): the commands it has processed in total and per command. `dsekp bench
// scale --store redis` reads them before the fleet starts and after the edges have logged every
// frame; the difference divided by the frames is the Redis work per frame.
//
// Housekeeping is kept apart: the edges' health probe sends a PING (CLUSTER INFO on a cluster)
// every 500 ms each, a replica acknowledges its primary's stream with REPLCONF, and the readings
// themselves are INFO commands; `work_commands` leaves them out.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace dsekp::bench::e2e {

struct RedisStats {
  std::string version;                         // redis_version (INFO server)
  std::uint64_t total_commands = 0;            // total_commands_processed
  std::map<std::string, std::uint64_t> calls;  // cmdstat_<name>: calls=N
  /// Commands other than the housekeeping ones (PING, CLUSTER INFO, INFO, REPLCONF).
  [[nodiscard]] std::uint64_t work_commands() const;
};

/// Reads the three sections from Redis on host:port (timeout about 2 s). Throws std::runtime_error
/// with Redis's or hiredis's reason when it cannot.
RedisStats read_redis_stats(const std::string& host, int port);

/// Parses the text of `INFO server`, `INFO stats` and `INFO commandstats` (lines "key:value",
/// "\r\n" ends; "cmdstat_get:calls=3,usec=..."). Unknown lines are ignored.
RedisStats parse_redis_info(const std::string& text);

/// after - before, per command (commands that only appear after count from zero).
RedisStats difference(const RedisStats& after, const RedisStats& before);

nlohmann::ordered_json to_json(const RedisStats& s);

}  // namespace dsekp::bench::e2e
