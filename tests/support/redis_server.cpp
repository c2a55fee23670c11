// Starting, killing and restarting a redis-server for the tests (see redis_server.hpp).
#include "tests/support/redis_server.hpp"

#include <arpa/inet.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "tests/support/loopback_port.hpp"

#ifndef DSEKP_REDIS_SERVER_PATH
#error "DSEKP_REDIS_SERVER_PATH must name the redis-server binary"
#endif

namespace dsekp::test {
namespace {

std::string run(int port, const std::vector<std::string>& args) {
  timeval tv{1, 0};
  redisContext* c = redisConnectWithTimeout("127.0.0.1", port, tv);
  if (c == nullptr || c->err != 0) {
    if (c != nullptr) redisFree(c);
    return "ERR connect";
  }
  (void)redisSetTimeout(c, tv);
  std::vector<const char*> argv;
  std::vector<std::size_t> lens;
  for (const std::string& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* r = static_cast<redisReply*>(
      redisCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lens.data()));
  std::string text = "ERR no reply";
  if (r != nullptr) {
    if (r->type == REDIS_REPLY_INTEGER) {
      text = std::to_string(r->integer);
    } else if (r->type == REDIS_REPLY_NIL) {
      text = "(nil)";
    } else if (r->str != nullptr) {
      text.assign(r->str, r->len);
    } else {
      text = "(array)";
    }
    freeReplyObject(r);
  }
  redisFree(c);
  return text;
}

}  // namespace

RedisServer::RedisServer(std::string dir, std::vector<std::string> extra_args)
    : dir_(std::move(dir)), extra_args_(std::move(extra_args)) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    port_ = free_loopback_port();
    if (start_once()) return;
  }
  throw std::runtime_error("redis-server did not start; its log:\n" + log());
}

RedisServer::~RedisServer() {
  if (process_) process_->signal(SIGKILL);
}

bool RedisServer::start_once() {
  // appendfsync always: the tests SIGKILL Redis and expect every acknowledged write back after
  // the restart. With the default (everysec) Redis may postpone writing its AOF buffer while a
  // background fsync is slow, and still answer, so a SIGKILL can lose an acknowledged write (seen
  // once on a loaded machine: RedisKill lost the last commit).
  std::vector<std::string> argv = {DSEKP_REDIS_SERVER_PATH,
                                   "--port",
                                   std::to_string(port_),
                                   "--bind",
                                   "127.0.0.1",
                                   "--save",
                                   "",
                                   "--appendonly",
                                   "yes",
                                   "--appendfsync",
                                   "always",
                                   "--dir",
                                   dir_,
                                   "--daemonize",
                                   "no",
                                   "--logfile",
                                   ""};
  argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
  process_ = std::make_unique<ChildProcess>(argv, dir_ + "/redis.stdout", dir_ + "/redis.stderr");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process_->running()) return false;  // e.g. the port was taken meanwhile
    // PONG only once the AOF is loaded (until then Redis answers LOADING).
    if (run(port_, {"PING"}) == "PONG") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  process_->stop();
  return false;
}

void RedisServer::kill() {
  process_->signal(SIGKILL);
  (void)process_->wait_for(std::chrono::milliseconds(5000));
}

void RedisServer::freeze() {
  process_->signal(SIGSTOP);
}

void RedisServer::thaw() {
  process_->signal(SIGCONT);
}

void RedisServer::restart() {
  if (!start_once()) throw std::runtime_error("redis-server did not restart; its log:\n" + log());
}

std::string RedisServer::command(const std::vector<std::string>& args) const {
  return run(port_, args);
}

std::string RedisServer::log() const {
  return read_file(dir_ + "/redis.stdout") + read_file(dir_ + "/redis.stderr");
}

}  // namespace dsekp::test
