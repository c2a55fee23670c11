// Parsing redis://HOST[:PORT][/PREFIX] and redis+cluster://HOST[:PORT],...[/PREFIX] (see
// redis_store_url.hpp).
#include "redis_store_url.hpp"

#include <charconv>
#include <utility>
#include <vector>

namespace dsekp::edge {
namespace {

/// HOST[:PORT] or [IPv6][:PORT], the port 6379 if not given.
bool parse_host_port(std::string_view authority, std::pair<std::string, int>& node,
                     std::string& error) {
  std::string_view host = authority;
  std::string_view port;
  if (authority.starts_with('[')) {  // [IPv6]:port
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      error = "store URL: unterminated '[' in the host";
      return false;
    }
    host = authority.substr(1, close - 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty() && !after.starts_with(':')) {
      error = "store URL: expected ':' after ']'";
      return false;
    }
    if (!after.empty()) port = after.substr(1);
  } else if (const std::size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) {
    error = "store URL: no host";
    return false;
  }
  if (host.find('@') != std::string_view::npos) {
    error = "store URL: more than one '@'";
    return false;
  }
  int port_number = 6379;
  if (!port.empty() || authority.ends_with(':')) {
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), port_number);
    if (ec != std::errc{} || end != port.data() + port.size() || port_number < 1 ||
        port_number > 65535) {
      error = "store URL: port must be 1..65535";
      return false;
    }
  }
  node = {std::string(host), port_number};
  return true;
}

}  // namespace

bool is_redis_store_url(std::string_view store) {
  return store.starts_with("redis://") || store.starts_with("redis+cluster://");
}

namespace {

/// "replicas=N&wait-ms=M" (either, both, any order) into `wait`. N: 1-5 (no 0: a commit only
/// its primary holds is lost with it), M: 1-60000 ms (the store also wants it below the command
/// timeout).
bool parse_cluster_wait(std::string_view query, redis::ReplicaWait& wait, std::string& error) {
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const std::size_t eq = pair.find('=');
    const std::string_view name = pair.substr(0, eq);
    const std::string_view text = eq == std::string_view::npos ? "" : pair.substr(eq + 1);
    int value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    const bool number = !text.empty() && ec == std::errc() && end == text.data() + text.size();
    if (name == "replicas" && number && value >= 1 && value <= 5) {
      wait.replicas = value;
    } else if (name == "wait-ms" && number && value >= 1 && value <= 60000) {
      wait.timeout_ms = value;
    } else {
      error = "store URL: \"" + std::string(pair) +
              "\": a cluster URL takes ?replicas=1..5 and wait-ms=1..60000 (no replicas=0: a "
              "commit only its primary holds is lost with it)";
      return false;
    }
  }
  return true;
}

}  // namespace

bool parse_redis_store_url(std::string_view url, RedisStoreOptions& options, std::string& error) {
  constexpr std::string_view kScheme = "redis://";
  constexpr std::string_view kClusterScheme = "redis+cluster://";
  const bool cluster = url.starts_with(kClusterScheme);
  if (!cluster && !url.starts_with(kScheme)) {
    error = "store URL must start with redis:// or redis+cluster://";
    return false;
  }
  std::string_view rest = url.substr(cluster ? kClusterScheme.size() : kScheme.size());
  // A cluster's replica wait: ?replicas=N&wait-ms=M (RedisStoreOptions::cluster_wait).
  redis::ReplicaWait wait = options.cluster_wait;
  if (const std::size_t question = rest.find('?'); cluster && question != std::string_view::npos) {
    if (!parse_cluster_wait(rest.substr(question + 1), wait, error)) return false;
    rest = rest.substr(0, question);
  }
  // redis://USER@HOST...: the ACL user. Its password never goes in the URL (argv is readable by
  // every local user through ps and /proc): it comes from a file or the environment.
  std::string_view user;
  if (const std::size_t at = rest.find('@'); at != std::string_view::npos && at < rest.find('/')) {
    user = rest.substr(0, at);
    rest = rest.substr(at + 1);
    if (user.find(':') != std::string_view::npos) {
      error =
          "store URL: no password in the URL (ps shows it to everyone): use "
          "--store-password-file or DSEKP_REDIS_PASSWORD";
      return false;
    }
    if (user.empty()) {
      error = "store URL: empty user name before '@'";
      return false;
    }
  }
  const std::size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  const std::string_view prefix =
      slash == std::string_view::npos ? std::string_view("dsekp:") : rest.substr(slash + 1);
  // One node, or on a cluster the nodes to ask for the slot map, separated by commas.
  std::vector<std::pair<std::string, int>> nodes;
  std::string_view list = authority;
  for (;;) {
    const std::size_t comma = list.find(',');
    std::pair<std::string, int> node;
    if (!parse_host_port(list.substr(0, comma), node, error)) return false;
    nodes.push_back(std::move(node));
    if (comma == std::string_view::npos) break;
    list = list.substr(comma + 1);
  }
  if (!cluster && nodes.size() > 1) {
    error = "store URL: several hosts need redis+cluster://";
    return false;
  }
  if (std::string why = check_redis_prefix(prefix); !why.empty()) {
    error = "store URL: " + why;
    return false;
  }
  options.endpoint.username = std::string(user);
  options.endpoint.host = nodes.front().first;
  options.endpoint.port = nodes.front().second;
  options.cluster_seeds.clear();
  if (cluster) options.cluster_seeds = std::move(nodes);
  options.cluster_wait = wait;
  options.prefix = std::string(prefix);
  return true;
}

std::unique_ptr<RedisSessionStore> open_redis_store_url(std::string_view url,
                                                        const std::string& password,
                                                        std::string& error) {
  RedisStoreOptions options;
  if (!parse_redis_store_url(url, options, error)) return nullptr;
  options.endpoint.password = password;
  return RedisSessionStore::open(options, error);
}

}  // namespace dsekp::edge
