// The standard process metrics of a Prometheus client, read from the kernel at every scrape:
//   process_cpu_seconds_total       user + system CPU time (getrusage)
//   process_resident_memory_bytes   resident set size (/proc/self/statm)
//   process_virtual_memory_bytes    virtual memory size (/proc/self/statm)
//   process_open_fds                open file descriptors (/proc/self/fd)
//   process_max_fds                 the soft limit on them (RLIMIT_NOFILE)
//   process_start_time_seconds      when the process started, Unix seconds (/proc/self/stat
//                                   and the boot time in /proc/stat)
// The names and meanings are those of the official clients, so existing dashboards and alerts
// (a leak of fds or memory, a restart) work unchanged.
#pragma once

#include "edge/metrics/metrics_registry.hpp"

namespace dsekp::edge::metrics {

void declare_process_metrics(Registry& registry);

}  // namespace dsekp::edge::metrics
