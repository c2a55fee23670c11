// Process metrics from getrusage, getrlimit and /proc (see process_metrics.hpp).
#include "edge/metrics/process_metrics.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace dsekp::edge::metrics {
namespace {

double cpu_seconds() {
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// statm: size resident shared text lib data dt, in pages.
void memory_bytes(double& resident, double& virtual_size) {
  std::ifstream statm("/proc/self/statm");
  double pages_virtual = 0, pages_resident = 0;
  statm >> pages_virtual >> pages_resident;
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  resident = pages_resident * page;
  virtual_size = pages_virtual * page;
}

double open_fds() {
  std::error_code ec;
  double n = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end;
       it.increment(ec))
    ++n;
  return n > 0 ? n - 1 : 0;  // less the descriptor of the directory being read
}

double max_fds() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 0;
  return static_cast<double>(limit.rlim_cur);
}

// Field 22 of /proc/self/stat is the start time in clock ticks after boot; the comm field
// (2) may hold spaces and parentheses, so fields are counted after its closing ')'.
double start_time_seconds() {
  std::ifstream stat_file("/proc/self/stat");
  const std::string stat((std::istreambuf_iterator<char>(stat_file)),
                         std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  double start_ticks = 0;
  for (int i = 3; fields >> field; ++i)
    if (i == 22) {
      start_ticks = std::stod(field);
      break;
    }
  std::ifstream boot("/proc/stat");
  double boot_time = 0;
  for (std::string key; boot >> key;)
    if (key == "btime") {
      boot >> boot_time;
      break;
    }
  return boot_time + start_ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

}  // namespace

void declare_process_metrics(Registry& registry) {
  registry.add_computed(
      {"process_cpu_seconds_total", "User and system CPU time spent, seconds.", {}, {}},
      MetricType::counter, [] { return std::vector<double>{cpu_seconds()}; });
  registry.add_computed({"process_resident_memory_bytes", "Resident memory size in bytes.", {}, {}},
                        MetricType::gauge, [] {
                          double resident = 0, virtual_size = 0;
                          memory_bytes(resident, virtual_size);
                          return std::vector<double>{resident};
                        });
  registry.add_computed({"process_virtual_memory_bytes", "Virtual memory size in bytes.", {}, {}},
                        MetricType::gauge, [] {
                          double resident = 0, virtual_size = 0;
                          memory_bytes(resident, virtual_size);
                          return std::vector<double>{virtual_size};
                        });
  registry.add_computed({"process_open_fds", "Number of open file descriptors.", {}, {}},
                        MetricType::gauge, [] { return std::vector<double>{open_fds()}; });
  registry.add_computed({"process_max_fds", "Maximum number of open file descriptors.", {}, {}},
                        MetricType::gauge, [] { return std::vector<double>{max_fds()}; });
  const double started = start_time_seconds();  // fixed for the process's life
  registry.add_computed({"process_start_time_seconds",
                         "Start time of the process since the Unix epoch, seconds.",
                         {},
                         {}},
                        MetricType::gauge, [started] { return std::vector<double>{started}; });
}

}  // namespace dsekp::edge::metrics
