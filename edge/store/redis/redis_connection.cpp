// hiredis connection with timeouts and bounded reconnect backoff (see redis_connection.hpp).
#include "redis_connection.hpp"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <vector>

namespace dsekp::edge::redis {
namespace {

timeval to_timeval(int ms) {
  timeval tv{};
  tv.tv_sec = ms / 1000;
  tv.tv_usec = static_cast<suseconds_t>((ms % 1000) * 1000);
  return tv;
}

// hiredis writes with write(2), so a write to a connection the server has closed (Redis killed
// while a large command is sent in several writes) raises SIGPIPE, which by default ends the
// process. The edge must fail the call instead: SIGPIPE is blocked in this thread for the
// duration of a command, and one it raised is consumed before the old mask returns.
class SigpipeGuard {
 public:
  SigpipeGuard() noexcept {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    // A SIGPIPE already pending before the command is not ours: leave it alone.
    was_pending_ = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
    blocked_ = pthread_sigmask(SIG_BLOCK, &pipe_, &old_) == 0;
  }
  ~SigpipeGuard() {
    if (!blocked_) return;
    if (!was_pending_) {
      const timespec zero{0, 0};
      while (sigtimedwait(&pipe_, nullptr, &zero) == -1 && errno == EINTR) {
      }
    }
    (void)pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t pipe_{};
  sigset_t old_{};
  bool was_pending_ = false;
  bool blocked_ = false;
};

}  // namespace

bool RedisConnection::authenticate(redisContext& c) {
  std::vector<const char*> argv = {"AUTH"};
  std::vector<std::size_t> lens = {4};
  if (!endpoint_.username.empty()) {
    argv.push_back(endpoint_.username.data());
    lens.push_back(endpoint_.username.size());
  }
  argv.push_back(endpoint_.password.data());
  lens.push_back(endpoint_.password.size());
  SigpipeGuard guard;
  auto* r = static_cast<redisReply*>(
      redisCommandArgv(&c, static_cast<int>(argv.size()), argv.data(), lens.data()));
  const bool ok = r != nullptr && r->type == REDIS_REPLY_STATUS;
  std::string why = r == nullptr        ? std::string(c.errstr)
                    : r->str != nullptr ? std::string(r->str, r->len)
                                        : std::string("unexpected reply");
  if (r != nullptr) freeReplyObject(r);
  if (!ok)
    drop("redis AUTH as " + (endpoint_.username.empty() ? "default" : endpoint_.username) +
         " refused: " + why);
  return ok;
}

bool RedisConnection::connect() {
  context_.reset();
  std::unique_ptr<redisContext, ContextDeleter> c(redisConnectWithTimeout(
      endpoint_.host.c_str(), endpoint_.port, to_timeval(endpoint_.connect_timeout_ms)));
  if (c == nullptr) {
    drop("redis connect: out of memory");
    return false;
  }
  if (c->err != 0) {
    drop("redis connect " + endpoint_.host + ":" + std::to_string(endpoint_.port) + ": " +
         c->errstr);
    return false;
  }
  // The same bound for every later read and write on the socket: a server that stopped answering
  // (stopped process, lost network) fails a call instead of blocking the edge.
  if (redisSetTimeout(c.get(), to_timeval(endpoint_.command_timeout_ms)) != REDIS_OK) {
    drop(std::string("redis set timeout: ") + c->errstr);
    return false;
  }
  if (!endpoint_.password.empty() && !authenticate(*c)) return false;
  context_ = std::move(c);
  backoff_ = std::chrono::milliseconds(0);
  ++connects_;
  up_.store(true, std::memory_order_relaxed);
  return true;
}

bool RedisConnection::ensure_connected() {
  if (context_ != nullptr) return true;
  if (Clock::now() < next_attempt_) return false;  // fail fast while backing off
  return connect();
}

void RedisConnection::drop(const std::string& why) {
  context_.reset();
  up_.store(false, std::memory_order_relaxed);
  last_error_ = why;
  const auto min = std::chrono::milliseconds(endpoint_.reconnect_min_ms);
  const auto max = std::chrono::milliseconds(endpoint_.reconnect_max_ms);
  backoff_ = backoff_.count() == 0 ? min : std::min(backoff_ * 2, max);
  next_attempt_ = Clock::now() + backoff_;
}

Reply RedisConnection::command(std::span<const std::string_view> args) {
  for (;;) {
    Reply reply = command_once(args);
    if (reply != nullptr || !outage_ || !outage_(last_error_)) return reply;
  }
}

std::vector<Reply> RedisConnection::pipeline(
    const std::vector<std::vector<std::string_view>>& commands) {
  if (!send(commands)) return {};
  return receive(commands.size());
}

bool RedisConnection::send(const std::vector<std::vector<std::string_view>>& commands) {
  if (commands.empty() || !ensure_connected()) return false;
  const SigpipeGuard no_sigpipe;
  for (const std::vector<std::string_view>& args : commands) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lengths;
    for (std::string_view a : args) {
      argv.push_back(a.data());
      lengths.push_back(a.size());
    }
    if (redisAppendCommandArgv(context_.get(), static_cast<int>(argv.size()), argv.data(),
                               lengths.data()) != REDIS_OK) {
      drop(std::string("redis: ") + context_->errstr);
      return false;
    }
  }
  ++round_trips_;
  // Written now (hiredis would write at the first read): the server starts on them while the
  // caller writes to the next one.
  for (int done = 0; done == 0;)
    if (redisBufferWrite(context_.get(), &done) != REDIS_OK) {
      drop(std::string("redis: ") + context_->errstr);
      return false;
    }
  return true;
}

std::vector<Reply> RedisConnection::receive(std::size_t count) {
  std::vector<Reply> replies;
  if (context_ == nullptr) return replies;
  const SigpipeGuard no_sigpipe;
  replies.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    void* raw = nullptr;
    if (redisGetReply(context_.get(), &raw) != REDIS_OK || raw == nullptr) {
      drop(std::string("redis: ") + (context_->errstr[0] != '\0' ? context_->errstr : "no reply"));
      return {};
    }
    replies.emplace_back(static_cast<redisReply*>(raw));
  }
  return replies;
}

Reply RedisConnection::command_once(std::span<const std::string_view> args) {
  // While backing off, last_error() still says why the connection was lost.
  if (!ensure_connected()) return nullptr;
  std::vector<const char*> argv;
  std::vector<std::size_t> lengths;
  argv.reserve(args.size());
  lengths.reserve(args.size());
  for (std::string_view a : args) {
    argv.push_back(a.data());
    lengths.push_back(a.size());
  }
  ++round_trips_;
  const SigpipeGuard no_sigpipe;
  Reply reply(static_cast<redisReply*>(redisCommandArgv(
      context_.get(), static_cast<int>(argv.size()), argv.data(), lengths.data())));
  if (reply == nullptr) {
    // An I/O error, a timeout or a protocol error: hiredis cannot use this context any more.
    drop(std::string("redis: ") + (context_->errstr[0] != '\0' ? context_->errstr : "no reply"));
    return nullptr;
  }
  return reply;
}

}  // namespace dsekp::edge::redis
