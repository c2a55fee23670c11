// The `--store` value an edge daemon would take to use the Redis store:
//   redis://[USER@]HOST[:PORT][/PREFIX]
// USER is the Redis ACL user to AUTH as; its password is never part of the URL (it would show in
// ps): the caller passes it (`--store-password-file`, DSEKP_REDIS_PASSWORD).
// HOST is a name or an IPv4 address (IPv6 in brackets: redis://[::1]:6379/), PORT defaults to
// 6379, PREFIX (the key prefix, see RedisStoreOptions) defaults to "dsekp:". Timeouts and the
// backoff keep their RedisEndpoint defaults. Examples: redis://127.0.0.1:6380/fleet1:
//
// A Redis Cluster: redis+cluster://[USER@]HOST[:PORT][,HOST[:PORT]...][/PREFIX], the nodes to
// ask for the slot map (any of the cluster's; more than one so that one down is not fatal), e.g.
// redis+cluster://10.0.0.5:7000,10.0.0.6:7000,10.0.0.7:7000/fleet1:
// followed, if wanted, by the replica wait: ?replicas=N (1-5, default 1: WAIT for that many of
// the primary's replicas after each commit) and/or wait-ms=M (default 500, below the command
// timeout of 1,000 ms), e.g. ...:7000/fleet1:?replicas=2&wait-ms=300. On a cluster URL a '?'
// therefore starts these options, never the prefix.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "redis_session_store.hpp"

namespace dsekp::edge {

/// Whether `store` (a --store value) names a Redis store: redis:// or redis+cluster://.
[[nodiscard]] bool is_redis_store_url(std::string_view store);

/// Fills `options` from `url` (endpoint host and port, prefix; other fields untouched). false
/// with a specific `error` for anything else (wrong scheme, bad port, bad prefix).
[[nodiscard]] bool parse_redis_store_url(std::string_view url, RedisStoreOptions& options,
                                         std::string& error);

/// parse_redis_store_url() then RedisSessionStore::open() with `password` (empty: no AUTH): the
/// factory the daemon would call.
std::unique_ptr<RedisSessionStore> open_redis_store_url(std::string_view url,
                                                        const std::string& password,
                                                        std::string& error);

}  // namespace dsekp::edge
