// dsekp_bench_redis_store: what one DATA frame's store work costs on the Redis store (loopback)
// against the SQLite store. Not a test: it prints figures.
//
// One cycle is what EdgeService does per accepted frame: load the device (state + generation),
// move its replay window (accept the next seq), then begin, save on the loaded generation, and
// commit. Devices are visited round robin. Reported per store: µs per cycle (mean, p50, p99) and
// round trips per cycle (Redis only: commands sent, counted by the store). The Redis server is
// started privately on a free loopback port (AOF on, appendfsync as chosen) unless --port names
// a running one. One thread: a single edge's sequential cost, not the fleet's throughput.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/edge/bench_process.hpp"
#include "bench/work_dir.hpp"
#include "edge/store/redis/redis_session_store.hpp"
#include "edge/store/sqlite_session_store.hpp"
#include "engines/executables.hpp"

namespace {

using namespace dsekp;
using Clock = std::chrono::steady_clock;

struct Figures {
  double mean_us = 0;
  double p50_us = 0;
  double p99_us = 0;
  double round_trips_per_cycle = 0;
};

EdgeDeviceState device_state(const DevId& id) {
  EdgeDeviceState s;
  s.dev_id = id;
  EdgeSession& session = s.established[0];
  session.sessctr = 1;
  session.uplink_window = ReplayWindow(64);
  s.established_count = 1;
  s.next_session_serial = 1;
  return s;
}

std::vector<DevId> device_ids(std::size_t n) {
  std::vector<DevId> ids(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (ids[i].assign("bench-" + std::to_string(i)) != Error::ok)
      throw std::runtime_error("dev_id");
  }
  return ids;
}

// Creates every device, then times `cycles` load -> accept -> save -> commit cycles.
Figures run(edge::SessionStore& store, const std::vector<DevId>& ids, std::size_t cycles,
            const std::function<std::uint64_t()>& round_trips) {
  for (const DevId& id : ids) {
    std::uint64_t g = edge::kAnyGeneration;
    if (!store.save(id, device_state(id), 0, g).ok()) throw std::runtime_error("seed save failed");
  }
  std::vector<double> us;
  us.reserve(cycles);
  const std::uint64_t rt0 = round_trips();
  EdgeDeviceState state;
  for (std::size_t c = 0; c < cycles; ++c) {
    const DevId& id = ids[c % ids.size()];
    const auto t0 = Clock::now();
    std::uint64_t g = 0;
    if (!store.load(id, state, g).ok()) throw std::runtime_error("load failed");
    const auto seq = static_cast<std::uint32_t>(c / ids.size() + 1);
    if (state.established[0].uplink_window.accept(seq) != Error::ok)
      throw std::runtime_error("window refused a fresh seq");
    edge::Transaction tx(store);
    if (!tx.status().ok() || !store.save(id, state, c, g).ok() || !tx.commit().ok())
      throw std::runtime_error("save/commit failed");
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  Figures f;
  f.round_trips_per_cycle = static_cast<double>(round_trips() - rt0) / static_cast<double>(cycles);
  double sum = 0;
  for (double v : us) sum += v;
  f.mean_us = sum / static_cast<double>(us.size());
  std::sort(us.begin(), us.end());
  f.p50_us = us[us.size() / 2];
  f.p99_us = us[std::min(us.size() - 1, us.size() * 99 / 100)];
  return f;
}

void print(const char* name, const Figures& f) {
  std::printf("%-28s %10.1f %10.1f %10.1f %14.2f\n", name, f.mean_us, f.p50_us, f.p99_us,
              f.round_trips_per_cycle);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Per-frame store cost: Redis (loopback) vs SQLite"};
  std::size_t devices = 1000;
  std::size_t cycles = 20000;
  int port = 0;
  std::string redis_server = dsekp::engines::redis_server_path();
  std::string appendfsync = "everysec";
  app.add_option("--devices", devices, "devices visited round robin")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--cycles", cycles, "load+save cycles timed per store")
      ->check(CLI::Range(1, 10000000));
  app.add_option("--port", port, "use the Redis server on 127.0.0.1:PORT (0: start a private one)")
      ->check(CLI::Range(0, 65535));
  app.add_option("--redis-server", redis_server, "redis-server binary for the private server");
  app.add_option("--appendfsync", appendfsync, "AOF fsync policy of the private server")
      ->check(CLI::IsMember({"everysec", "always", "no"}));
  CLI11_PARSE(app, argc, argv);
  if (port == 0 && redis_server.empty()) {
    std::fprintf(
        stderr, "no redis-server found: install the redis-server package or give --redis-server\n");
    return 2;
  }

  try {
    // Removed however this ends; the Redis server below, declared later, stops before it is.
    const dsekp::bench::WorkDir work("dsekp-redis-bench-");
    const std::string& dir = work.path();
    const std::vector<DevId> ids = device_ids(devices);
    std::printf("devices %zu, cycles %zu (load -> accept seq -> begin/save/commit), one thread\n",
                devices, cycles);
    std::printf("%-28s %10s %10s %10s %14s\n", "store", "mean_us", "p50_us", "p99_us",
                "round_trips");

    {
      std::string error;
      auto sqlite = edge::SqliteSessionStore::open(dir + "/edge.db", {}, error);
      if (!sqlite) throw std::runtime_error(error);
      print("sqlite (WAL, sync=NORMAL)", run(*sqlite, ids, cycles, [] { return 0; }));
    }

    dsekp::bench::edge::BenchProcess server;
    if (port == 0) {
      port = dsekp::bench::edge::free_loopback_port();
      server = dsekp::bench::edge::BenchProcess(
          {redis_server, "--port", std::to_string(port), "--bind", "127.0.0.1", "--save", "",
           "--appendonly", "yes", "--appendfsync", appendfsync, "--dir", dir},
          dir + "/redis.log");
      if (!dsekp::bench::edge::wait_for_tcp(port, std::chrono::seconds(10)))
        throw std::runtime_error("redis-server did not start (see " + dir + "/redis.log)");
    }
    edge::RedisStoreOptions options;
    options.endpoint.port = port;
    options.prefix = "bench:";
    std::string error;
    std::unique_ptr<edge::RedisSessionStore> redis;
    for (int attempt = 0; attempt < 50 && !redis; ++attempt) {  // LOADING right after start
      redis = edge::RedisSessionStore::open(options, error);
      if (!redis) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!redis) throw std::runtime_error(error);
    const std::string name = "redis (AOF " + appendfsync + ")";
    print(name.c_str(), run(*redis, ids, cycles, [&] { return redis->round_trips(); }));
    redis.reset();
    (void)server.stop();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dsekp_bench_redis_store: %s\n", e.what());
    return 1;
  }
  return 0;
}
