// Whether a Redis server's configuration makes an acknowledged write durable: the server replies
// before its append-only file reaches the disk unless it runs with appendonly yes, appendfsync
// always and no-appendfsync-on-rewrite no (then each write was fsync'd before the reply), and may
// evict a key for memory unless maxmemory-policy is noeviction. Asked with CONFIG GET each time
// (an ACL or a managed Redis that forbids CONFIG makes the answer storage_failure). A replica
// promoted after a primary's loss may still lack the newest writes (docs/SCALING.md).
#pragma once

#include "edge/store/redis/redis_connection.hpp"
#include "edge/store/session_store.hpp"

namespace dsekp::edge::redis {

/// ok only with all four settings; else storage_failure naming the setting and its value.
StoreResult check_writes_durable(RedisConnection& connection);

}  // namespace dsekp::edge::redis
