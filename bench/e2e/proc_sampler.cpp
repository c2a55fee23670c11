// Reading and sampling /proc (see proc_sampler.hpp).
#include "proc_sampler.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

namespace dsekp::bench::e2e {
namespace {

std::optional<std::string> slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<std::uint64_t> number_after(const std::string& text, std::string_view label) {
  const auto at = text.find(label);
  if (at == std::string::npos) return std::nullopt;
  std::size_t i = at + label.size();
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data() + i, text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data() + i) return std::nullopt;
  return value;
}

}  // namespace

std::optional<std::pair<std::uint64_t, std::uint64_t>> parse_stat_times(const std::string& stat) {
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  // After "pid (comm)" come field 3 (state) onwards; utime and stime are fields 14 and 15.
  std::istringstream rest(stat.substr(close + 1));
  std::string field;
  std::uint64_t utime = 0, stime = 0;
  for (int n = 3; n <= 15; ++n) {
    if (!(rest >> field)) return std::nullopt;
    if (n < 14) continue;
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
    if (ec != std::errc() || end != field.data() + field.size()) return std::nullopt;
    (n == 14 ? utime : stime) = value;
  }
  return std::pair{utime, stime};
}

std::optional<std::pair<std::uint64_t, std::uint64_t>> parse_status_memory(
    const std::string& status) {
  const auto rss = number_after(status, "VmRSS:");
  const auto hwm = number_after(status, "VmHWM:");
  if (!rss || !hwm) return std::nullopt;
  return std::pair{*rss, *hwm};
}

std::optional<ProcReading> read_proc(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid);
  const auto stat = slurp(dir + "/stat");
  const auto status = slurp(dir + "/status");
  if (!stat || !status) return std::nullopt;
  const auto times = parse_stat_times(*stat);
  const auto memory = parse_status_memory(*status);
  if (!times || !memory) return std::nullopt;  // e.g. a zombie: no Vm* lines any more
  static const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  ProcReading r;
  r.cpu_user_s = static_cast<double>(times->first) / ticks;
  r.cpu_sys_s = static_cast<double>(times->second) / ticks;
  r.rss_kb = memory->first;
  r.hwm_kb = memory->second;
  return r;
}

ProcSummary summarize(const std::vector<ProcSample>& samples) {
  ProcSummary s;
  s.samples = samples.size();
  if (samples.empty()) return s;
  const ProcSample& first = samples.front();
  const ProcSample& last = samples.back();
  s.wall_s = last.t_s - first.t_s;
  s.cpu_user_s = last.reading.cpu_user_s - first.reading.cpu_user_s;
  s.cpu_sys_s = last.reading.cpu_sys_s - first.reading.cpu_sys_s;
  if (s.wall_s > 0) s.cpu_percent = 100.0 * (s.cpu_user_s + s.cpu_sys_s) / s.wall_s;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    s.rss_peak_kb = std::max(s.rss_peak_kb, samples[i].reading.rss_kb);
    if (i == 0) continue;
    const double dt = samples[i].t_s - samples[i - 1].t_s;
    // Intervals much shorter than the period (the extra sample at stop()) say little.
    if (dt < 0.5) continue;
    const double dcpu = samples[i].reading.cpu_s() - samples[i - 1].reading.cpu_s();
    s.cpu_percent_max_1s = std::max(s.cpu_percent_max_1s, 100.0 * dcpu / dt);
  }
  s.rss_peak_kb = std::max(s.rss_peak_kb, last.reading.hwm_kb);
  s.rss_final_kb = last.reading.rss_kb;
  return s;
}

ProcSampler::ProcSampler(std::vector<pid_t> pids, std::chrono::milliseconds period)
    : pids_(std::move(pids)), period_(period), samples_(pids_.size()) {}

ProcSampler::~ProcSampler() {
  stop();
}

void ProcSampler::start() {
  started_ = std::chrono::steady_clock::now();
  sample_all();
  thread_ = std::thread([this] { loop(); });
}

void ProcSampler::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  sample_all();
}

void ProcSampler::sample_all() {
  const double t =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  for (std::size_t i = 0; i < pids_.size(); ++i)
    if (auto reading = read_proc(pids_[i])) samples_[i].push_back({t, *reading});
}

void ProcSampler::loop() {
  auto next = started_ + period_;
  std::unique_lock lock(mutex_);
  while (!wake_.wait_until(lock, next, [this] { return stopping_; })) {
    lock.unlock();
    sample_all();
    lock.lock();
    next += period_;
  }
}

}  // namespace dsekp::bench::e2e
