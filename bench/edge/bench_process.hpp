// The processes `dsekp bench edge` runs: a private Mosquitto on a free loopback port and the
// edge (`dsekp edge`, this same executable). Both are stopped (SIGTERM, then SIGKILL after a
// grace period) when their owner goes out of scope, also when the benchmark fails half way.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace dsekp::bench::edge {

/// What a process spent: CPU time, user and system, and its read- and write-type system calls
/// (/proc/PID/io syscr and syscw: read, recv, pread, ... and write, send, pwrite, ...).
struct ProcessCost {
  double user_s = 0;
  double system_s = 0;
  std::uint64_t read_calls = 0;
  std::uint64_t write_calls = 0;

  [[nodiscard]] double cpu_s() const noexcept { return user_s + system_s; }
  [[nodiscard]] ProcessCost minus(const ProcessCost& earlier) const noexcept;
};

/// The system-call counts of process `pid` ("self": this one) so far; false if /proc/PID/io
/// cannot be read (the counts are then left as they are).
bool read_system_calls(const std::string& pid, ProcessCost& cost);

/// This process' cost so far (getrusage and /proc/self/io).
[[nodiscard]] ProcessCost own_cost();

class BenchProcess {
 public:
  BenchProcess() = default;
  /// Starts argv[0] (a path) with stdout and stderr appended to `log_file`; throws on failure.
  BenchProcess(const std::vector<std::string>& argv, const std::string& log_file);
  ~BenchProcess();
  BenchProcess(BenchProcess&& other) noexcept;
  BenchProcess& operator=(BenchProcess&& other) noexcept;

  /// SIGTERM, then SIGKILL after `grace`; the exit status (128 + signal if killed), -1 if none.
  /// `cost`, if given, receives the process' cost over its life: its CPU (wait4) and its system
  /// calls up to the SIGTERM (its shutdown's are not counted).
  int stop(std::chrono::milliseconds grace = std::chrono::milliseconds(5000),
           ProcessCost* cost = nullptr) noexcept;
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
