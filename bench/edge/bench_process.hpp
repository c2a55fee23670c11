// The processes `dsekp bench edge` runs: a private Mosquitto on a free loopback port and the
// edge (`dsekp edge`, this same executable). Both are stopped (SIGTERM, then SIGKILL after a
// grace period) when their owner goes out of scope, also when the benchmark fails half way.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace dsekp::bench::edge {

class BenchProcess {
 public:
  BenchProcess() = default;
  /// Starts argv[0] (a path) with stdout and stderr appended to `log_file`; throws on failure.
  BenchProcess(const std::vector<std::string>& argv, const std::string& log_file);
  ~BenchProcess();
  BenchProcess(BenchProcess&& other) noexcept;
  BenchProcess& operator=(BenchProcess&& other) noexcept;

  /// SIGTERM, then SIGKILL after `grace`; the exit status (128 + signal if killed), -1 if none.
  /// `cpu_s`, if given, receives the process' CPU time over its life (user + system, wait4).
  int stop(std::chrono::milliseconds grace = std::chrono::milliseconds(5000),
           double* cpu_s = nullptr) noexcept;
  /// True while the process runs.
  bool running() noexcept;

 private:
  pid_t pid_ = -1;
};

/// A loopback TCP port that was free a moment ago.
int free_loopback_port();
/// Waits until 127.0.0.1:`port` accepts a TCP connection.
bool wait_for_tcp(int port, std::chrono::milliseconds timeout);

/// A private Mosquitto for the benchmark: anonymous, no persistence, no limit on the messages
/// queued per client (so a slower subscriber delays, never drops), listening on 127.0.0.1.
class BenchBroker {
 public:
  /// Writes `dir`/mosquitto.conf and starts `mosquitto_path`; throws if it does not come up.
  BenchBroker(const std::string& mosquitto_path, const std::string& dir);
  [[nodiscard]] int port() const noexcept { return port_; }

 private:
  int port_ = 0;
  BenchProcess process_;
};

}  // namespace dsekp::bench::edge
