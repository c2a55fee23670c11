// A private redis-server (for a test, a test suite or a measurement): started on a free loopback
// port with AOF persistence in a given directory (`--save '' --appendonly yes --appendfsync
// always`), killed on destruction. It can be killed (SIGKILL, no shutdown save) and restarted on
// the same port and directory, which is how the tests check that the store fails closed and that
// committed state survives in the AOF.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engines/server_placement.hpp"
#include "experiment/process.hpp"

namespace dsekp::engines {

class RedisServer {
 public:
  /// Starts redis-server (redis_server_path()) with its files in `dir` and `extra_args`
  /// (e.g. ACL users; the default user must still be allowed PING) and waits until it answers
  /// PING. Throws with its log if it does not come up within 10 s (or is not installed).
  explicit RedisServer(std::string dir, std::vector<std::string> extra_args = {},
                       ServerPlacement placement = {});
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  [[nodiscard]] int port() const noexcept { return port_; }
  [[nodiscard]] const std::string& host() const noexcept { return placement_.host; }
  /// The process id of its latest start.
  [[nodiscard]] pid_t pid() const noexcept;
  /// SIGKILL and reap: no shutdown, no final save; only what the AOF has survives.
  void kill();
  /// SIGSTOP / SIGCONT: a server that hangs with its connections open.
  void freeze();
  void thaw();
  /// Starts it again on the same port and directory (it replays its AOF) and waits for PING.
  void restart();
  /// Runs one command through a fresh connection (test set-up and inspection), returning the
  /// reply as text: a string or status as is, an integer in decimal, an error as "ERR...".
  std::string command(const std::vector<std::string>& args) const;
  [[nodiscard]] std::string log() const;

 private:
  bool start_once();

  std::string dir_;
  std::vector<std::string> extra_args_;
  ServerPlacement placement_;
  int port_ = 0;
  std::unique_ptr<experiment::Child> process_;
};

}  // namespace dsekp::engines
