// Starting, killing and restarting a private redis-server (see redis_server.hpp).
#include "engines/redis_server.hpp"

#include <arpa/inet.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "engines/executables.hpp"
#include "engines/run_to_end.hpp"
#include "experiment/interrupt.hpp"
#include "experiment/net.hpp"

namespace dsekp::engines {
namespace {

std::string run(const std::string& host, int port, const std::vector<std::string>& args) {
  timeval tv{1, 0};
  redisContext* c = redisConnectWithTimeout(host.c_str(), port, tv);
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

RedisServer::RedisServer(std::string dir, std::vector<std::string> extra_args,
                         ServerPlacement placement)
    : dir_(std::move(dir)), extra_args_(std::move(extra_args)), placement_(std::move(placement)) {
  if (redis_server_path().empty())
    throw std::runtime_error(
        "no redis-server found (/usr/bin, /usr/local/bin, /usr/sbin, PATH): "
        "install the redis-server package");
  for (int attempt = 0; attempt < 3; ++attempt) {
    port_ = experiment::free_loopback_port();
    if (start_once()) return;
  }
  throw std::runtime_error("redis-server did not start; its log:\n" + log());
}

RedisServer::~RedisServer() {
  if (process_) process_->send(SIGKILL);  // nothing kept: a private server's end
}

pid_t RedisServer::pid() const noexcept {
  return process_ ? process_->pid() : 0;
}

bool RedisServer::start_once() {
  // appendfsync always: the tests SIGKILL Redis and expect every acknowledged write back after
  // the restart. With the default (everysec) Redis may postpone writing its AOF buffer while a
  // background fsync is slow, and still answer, so a SIGKILL can lose an acknowledged write (seen
  // once on a loaded machine: RedisKill lost the last commit).
  std::vector<std::string> argv = {redis_server_path(),
                                   "--port",
                                   std::to_string(port_),
                                   "--bind",
                                   placement_.host,
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
  if (placement_.host != "127.0.0.1") {
    // Without a password Redis refuses clients not on loopback ("protected mode"); a server
    // placed elsewhere is on a private network a partition test made for it.
    argv.insert(argv.end(), {"--protected-mode", "no"});
  }
  argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
  process_.reset();  // a killed or failed start: reaped before its successor
  process_ = std::make_unique<experiment::Child>(experiment::ChildSpec{
      "redis-server", placed_argv(placement_, argv), dir_ + "/redis.log", {}});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process_->running()) return false;  // e.g. the port was taken meanwhile
    // PONG only once the AOF is loaded (until then Redis answers LOADING).
    if (run(placement_.host, port_, {"PING"}) == "PONG") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    experiment::throw_if_interrupted();
  }
  (void)process_->stop(std::chrono::milliseconds(1000));
  return false;
}

void RedisServer::kill() {
  process_->send(SIGKILL);
  (void)process_->wait_for(std::chrono::milliseconds(5000));
}

void RedisServer::freeze() {
  process_->send(SIGSTOP);
}

void RedisServer::thaw() {
  process_->send(SIGCONT);
}

void RedisServer::restart() {
  if (!start_once()) throw std::runtime_error("redis-server did not restart; its log:\n" + log());
}

std::string RedisServer::command(const std::vector<std::string>& args) const {
  return run(placement_.host, port_, args);
}

std::string RedisServer::log() const {
  return file_text(dir_ + "/redis.log");
}

}  // namespace dsekp::engines
