// CPU time and memory of other processes (the edge, the broker), read from /proc the way `top`
// and `ps` do: /proc/<pid>/stat for user and system CPU time (fields 14 and 15, in clock ticks),
// /proc/<pid>/status for the resident set (VmRSS) and its high-water mark (VmHWM, the kernel's
// own peak, which catches peaks between two samples). A ProcSampler reads them once a second on
// its own thread for the duration of a measurement.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace dsekp::bench::e2e {

struct ProcReading {
  double cpu_user_s = 0;
  double cpu_sys_s = 0;
  std::uint64_t rss_kb = 0;  // VmRSS
  std::uint64_t hwm_kb = 0;  // VmHWM (peak RSS since the process started)
  [[nodiscard]] double cpu_s() const noexcept { return cpu_user_s + cpu_sys_s; }
};

/// One reading of `pid`, or nothing if the process is gone (or its files cannot be parsed).
std::optional<ProcReading> read_proc(pid_t pid);

/// Parses the text of /proc/<pid>/stat (user and system time in clock ticks; the command name in
/// parentheses may contain spaces and parentheses, so fields are counted after the last ')').
std::optional<std::pair<std::uint64_t, std::uint64_t>> parse_stat_times(const std::string& stat);

/// Parses "VmRSS:" and "VmHWM:" (kB) from the text of /proc/<pid>/status.
std::optional<std::pair<std::uint64_t, std::uint64_t>> parse_status_memory(
    const std::string& status);

struct ProcSample {
  double t_s = 0;  // since the sampler started
  ProcReading reading;
};

/// What a series of samples of one process says.
struct ProcSummary {
  std::size_t samples = 0;
  double wall_s = 0;      // first to last sample
  double cpu_user_s = 0;  // CPU used between the first and the last sample
  double cpu_sys_s = 0;
  double cpu_percent = 0;          // (user + sys) / wall, in % of one core
  double cpu_percent_max_1s = 0;   // the busiest interval between two consecutive samples
  std::uint64_t rss_peak_kb = 0;   // max(VmRSS samples, last VmHWM)
  std::uint64_t rss_final_kb = 0;  // VmRSS of the last sample
};

ProcSummary summarize(const std::vector<ProcSample>& samples);

/// Samples a set of processes every `period` on a background thread, from start() until stop()
/// (or destruction). A process that has ended simply gets no more samples.
class ProcSampler {
 public:
  explicit ProcSampler(std::vector<pid_t> pids,
                       std::chrono::milliseconds period = std::chrono::seconds(1));
  ~ProcSampler();
  ProcSampler(const ProcSampler&) = delete;
  ProcSampler& operator=(const ProcSampler&) = delete;

  /// Takes a first sample at once, then one every period.
  void start();
  /// Takes a last sample and stops the thread.
  void stop();
  /// The samples of the index-th pid (call after stop()).
  [[nodiscard]] const std::vector<ProcSample>& samples(std::size_t index) const {
    return samples_.at(index);
  }

 private:
  void sample_all();
  void loop();

  std::vector<pid_t> pids_;
  std::chrono::milliseconds period_;
  std::chrono::steady_clock::time_point started_;
  std::vector<std::vector<ProcSample>> samples_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace dsekp::bench::e2e
