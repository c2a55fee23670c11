// Whether the server's configuration makes a write durable (see redis_durability.hpp).
#include "edge/store/redis/redis_durability.hpp"

#include <array>
#include <string>
#include <string_view>
#include <utility>

namespace dsekp::edge::redis {

StoreResult check_writes_durable(RedisConnection& connection) {
  // Every write fsync'd before its reply, also while the AOF is being rewritten, and no state
  // ever evicted for memory.
  constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kNeeded{{
      {"appendonly", "yes"},
      {"appendfsync", "always"},
      {"no-appendfsync-on-rewrite", "no"},
      {"maxmemory-policy", "noeviction"},
  }};
  for (const auto& [name, wanted] : kNeeded) {
    const std::array<std::string_view, 3> args{"CONFIG", "GET", name};
    const Reply r = connection.command(args);
    if (r == nullptr) return storage_failure(connection.last_error());
    const std::string what = "CONFIG GET " + std::string(name);
    if (r->type == REDIS_REPLY_ERROR)
      return storage_failure(what + ": " + std::string(r->str, r->len));
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[1]->type != REDIS_REPLY_STRING)
      return storage_failure(what + ": unexpected reply");
    const std::string value(r->element[1]->str, r->element[1]->len);
    if (value != wanted)
      return storage_failure("the server runs with " + std::string(name) + " " + value +
                             ", so an acknowledged write can still be lost (needs " +
                             std::string(wanted) + ")");
  }
  return StoreResult{};
}

}  // namespace dsekp::edge::redis
