// One hiredis connection to a Redis server, for the Redis session store: timeouts on connect and
// on every command, fail-fast while the server is unreachable, reconnection with a bounded
// exponential backoff, and a count of round trips.
//
// Why fail fast: the edge must refuse to accept frames while it cannot reach the shared state
// (fail closed), and it must not stall its message loop doing so. A call either reaches Redis
// within the command timeout or fails; after a failure, calls fail at once, without touching the
// network, until the backoff delay has passed; then the next call tries one reconnect (bounded by
// the connect timeout). The delay doubles after every failed reconnect, from reconnect_min_ms up
// to reconnect_max_ms, and resets once a reconnect succeeds.
//
// Not thread-safe (one thread uses it, as the SessionStore it serves).
#pragma once

#include <hiredis/hiredis.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dsekp::edge::redis {

struct RedisEndpoint {
  std::string host = "127.0.0.1";
  int port = 6379;
  // Redis ACL login, sent with AUTH on every (re)connection. Empty password: none (the server
  // must then let the default user in). Empty username with a password: the default user
  // (requirepass). The password comes from a file or the environment, never from argv.
  std::string username;
  std::string password;
  int connect_timeout_ms = 500;
  int command_timeout_ms = 1000;
  int reconnect_min_ms = 50;
  int reconnect_max_ms = 2000;
};

struct ReplyDeleter {
  void operator()(redisReply* r) const noexcept { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

/// Called (on the connection's thread) each time a command could not reach the server, with
/// the reason. Return true to wait and try the command again (the handler sleeps as it likes:
/// the daemon's fail-closed pause, edge_daemon.hpp), false to fail the command.
using OutageHandler = std::function<bool(const std::string& why)>;

class RedisConnection {
 public:
  explicit RedisConnection(RedisEndpoint endpoint) noexcept : endpoint_(std::move(endpoint)) {}
  ~RedisConnection() = default;
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  /// Connects now, ignoring the backoff. false (and last_error()) if the server is unreachable.
  bool connect();

  /// Sends one command (binary-safe arguments) and returns its reply, which may be an error
  /// reply (REDIS_REPLY_ERROR: the server refused the command, the connection stays up). Null
  /// if the server could not be reached or did not answer in time: the connection is then
  /// dropped and the backoff starts (see the file comment); last_error() says why.
  Reply command(std::span<const std::string_view> args);
  /// Sends `commands` in one write and reads their replies in order: one network round trip.
  /// Empty if the server could not be reached or a reply did not come in time (the connection
  /// is then dropped, as for command(); some of the commands may have run). Not retried by the
  /// outage handler: the caller decides what a partial run means.
  std::vector<Reply> pipeline(const std::vector<std::vector<std::string_view>>& commands);
  /// pipeline() in two halves, so that several servers can work on their commands at once:
  /// send() writes `commands` (false, dropped, last_error() if it cannot); receive() then reads
  /// `count` replies (empty, dropped, last_error() as pipeline()). One round trip per send().
  bool send(const std::vector<std::vector<std::string_view>>& commands);
  std::vector<Reply> receive(std::size_t count);

  /// Drops the connection (the backoff starts, last_error() is `why`): for a caller that
  /// cannot read the replies it sent for.
  void abandon(const std::string& why) { drop(why); }
  [[nodiscard]] bool connected() const noexcept { return context_ != nullptr; }
  [[nodiscard]] const RedisEndpoint& endpoint() const noexcept { return endpoint_; }
  /// Set: command() does not fail when the server is unreachable but asks `handler` whether to
  /// wait, and tries again (reconnecting after the backoff) as long as it says so. A command
  /// whose reply was lost is sent again: callers must tolerate that (the commit script's
  /// generation checks make a second run of an applied unit a generation_conflict).
  void set_outage_handler(OutageHandler handler) { outage_ = std::move(handler); }
  /// Whether the last command reached the server (true after a connect). Any thread may read it.
  [[nodiscard]] bool up() const noexcept { return up_.load(std::memory_order_relaxed); }
  /// Commands sent that got a reply or an I/O failure (each is one network round trip).
  [[nodiscard]] std::uint64_t round_trips() const noexcept { return round_trips_; }
  /// Successful connects (the first one included).
  [[nodiscard]] std::uint64_t connects() const noexcept { return connects_; }
  /// Why the last command or connect failed.
  [[nodiscard]] const std::string& last_error() const noexcept { return last_error_; }

 private:
  /// AUTH on a fresh connection; false (and dropped, with last_error()) if refused.
  bool authenticate(redisContext& c);
  struct ContextDeleter {
    void operator()(redisContext* c) const noexcept { redisFree(c); }
  };
  using Clock = std::chrono::steady_clock;

  bool ensure_connected();
  void drop(const std::string& why);
  Reply command_once(std::span<const std::string_view> args);

  RedisEndpoint endpoint_;
  std::unique_ptr<redisContext, ContextDeleter> context_;
  Clock::time_point next_attempt_{};      // no reconnect before this instant
  std::chrono::milliseconds backoff_{0};  // delay after the next failed reconnect
  std::uint64_t round_trips_ = 0;
  std::uint64_t connects_ = 0;
  std::string last_error_;
  OutageHandler outage_;
  std::atomic<bool> up_{false};
};

}  // namespace dsekp::edge::redis
