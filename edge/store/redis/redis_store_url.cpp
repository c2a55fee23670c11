// Parsing redis://HOST[:PORT][/PREFIX] (see redis_store_url.hpp).
#include "redis_store_url.hpp"

#include <charconv>

namespace dsekp::edge {

bool parse_redis_store_url(std::string_view url, RedisStoreOptions& options, std::string& error) {
  constexpr std::string_view kScheme = "redis://";
  if (!url.starts_with(kScheme)) {
    error = "store URL must start with redis://";
    return false;
  }
  std::string_view rest = url.substr(kScheme.size());
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
  if (std::string why = check_redis_prefix(prefix); !why.empty()) {
    error = "store URL: " + why;
    return false;
  }
  options.endpoint.username = std::string(user);
  options.endpoint.host = std::string(host);
  options.endpoint.port = port_number;
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
