// `dsekp link` (see link_command.hpp): argument checks, then a LinkEmulator until a signal.
#include "link_command.hpp"

#include <signal.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "linkemu/host_port.hpp"
#include "linkemu/link_emulator.hpp"
#include "linkemu/link_spec.hpp"
#include "linkemu/link_stats.hpp"

namespace dsekp::cli {
namespace {

struct LinkArgs {
  std::string listen;
  std::string target;
  std::string link = "none";
  std::uint64_t seed = 1;
  std::string stats_json;
};

[[noreturn]] void bad_argument(const std::string& message) {
  std::fprintf(stderr, "dsekp link: %s\n", message.c_str());
  std::exit(2);
}

/// Each relayed connection takes two descriptors; a fleet of simulated devices needs more than
/// the usual soft limit of 1024, so take what the hard limit allows.
void raise_descriptor_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

int run_link(const LinkArgs& args) {
  linkemu::HostPort listen;
  linkemu::HostPort target;
  std::string error;
  if (!linkemu::parse_host_port(args.listen, true, listen, error))
    bad_argument("--listen: " + error);
  if (!linkemu::parse_host_port(args.target, false, target, error))
    bad_argument("--target: " + error);
  const linkemu::LinkSpecResult parsed = linkemu::parse_link_spec(args.link);
  if (!parsed.ok()) bad_argument("--link: " + parsed.error);

  // Blocked before the relay thread exists; only sigwait() below receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  raise_descriptor_limit();

  linkemu::LinkEmulator emulator(*parsed.spec, args.seed);
  const std::uint16_t port =
      emulator.start(listen.host, listen.port, target.host, target.port, error);
  if (port == 0) {
    std::fprintf(stderr, "dsekp link: %s\n", error.c_str());
    return 1;
  }
  const std::string address = emulator.listen_address();
  const bool v6 = address.find(':') != std::string::npos;
  std::printf("dsekp link: listening on %s%s%s:%u\n", v6 ? "[" : "", address.c_str(), v6 ? "]" : "",
              static_cast<unsigned>(port));
  std::fflush(stdout);
  const std::string spec_text = linkemu::format_link_spec(*parsed.spec);
  std::fprintf(stderr, "dsekp link: relaying to %s:%u, link %s, seed %llu\n", target.host.c_str(),
               static_cast<unsigned>(target.port), spec_text.c_str(),
               static_cast<unsigned long long>(args.seed));

  int sig = 0;
  sigwait(&signals, &sig);
  emulator.stop();
  const linkemu::LinkStats stats = emulator.stats();
  std::fprintf(stderr,
               "dsekp link: signal %d, stopped after %llu connections; bytes up %llu, down %llu; "
               "%llu stalls, %llu drops, %llu target connect failures\n",
               sig, static_cast<unsigned long long>(stats.connections_accepted),
               static_cast<unsigned long long>(stats.bytes[linkemu::upstream]),
               static_cast<unsigned long long>(stats.bytes[linkemu::downstream]),
               static_cast<unsigned long long>(stats.stalls),
               static_cast<unsigned long long>(stats.drops),
               static_cast<unsigned long long>(stats.target_connect_failures));
  if (!args.stats_json.empty()) {
    std::ofstream out(args.stats_json, std::ios::trunc);
    out << linkemu::link_stats_json(stats, spec_text);
    out.close();
    if (!out) {
      std::fprintf(stderr, "dsekp link: cannot write %s\n", args.stats_json.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace

void add_link_command(CLI::App& app) {
  auto args = std::make_shared<LinkArgs>();
  CLI::App* cmd = app.add_subcommand(
      "link",
      "Relay TCP connections through an emulated link (delay, jitter, rate, stalls, drops) until "
      "SIGINT/SIGTERM; see docs/LINK_EMULATOR.md");
  cmd->add_option("--listen", args->listen, "Listen on HOST:PORT (port 0: any free port)")
      ->required();
  cmd->add_option("--target", args->target, "Relay every connection to HOST:PORT")->required();
  cmd->add_option(
         "--link", args->link,
         "SPEC: comma-separated key=value, e.g. delay=250ms,jitter=80ms,stall=0.5%. Keys: "
         "delay, jitter, dist (normal|lognormal|pareto), rate (e.g. 1mbit, 125kB), burst, "
         "stall, stall_time, drop, drop_mode (rst|fin|blackhole), queue. none = pure relay")
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of the per-chunk random draws")
      ->capture_default_str();
  cmd->add_option("--stats-json", args->stats_json, "Write the relay's counters here on exit");
  cmd->callback([args] {
    const int code = run_link(*args);
    if (code != 0) std::exit(code);
  });
}

}  // namespace dsekp::cli
