// Memory, disk and throughput of the edge's session state (see sessions_bench.hpp).
//
// Every device gets a real state: its own DEV_SECRET, a real INIT/ACK handshake and one DATA
// frame that confirms the session, so keys, nonces, replay cache, token bucket and replay window
// hold what an edge holds after a handshake. Memory is the growth of the process's resident set
// while the states are inserted, divided by N: allocator rounding and table slack included.
#include "sessions_bench.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "bench_credentials.hpp"
#include "cpu_timer.hpp"
#include "dsekp/device_session.hpp"
#include "dsekp/edge_session.hpp"
#include "edge/store/compact_state_map.hpp"
#include "edge/store/device_state_codec.hpp"
#include "edge/store/sqlite_session_store.hpp"
#include "work_dir.hpp"

namespace dsekp::bench {
namespace {

using edge::CompactStateMap;
using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kStartMs = 1'764'460'800'000;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0;
  std::uint64_t resident = 0;
  if (!(statm >> size >> resident)) throw std::runtime_error("cannot read /proc/self/statm");
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

std::string device_name(std::size_t i) {
  char name[32];
  std::snprintf(name, sizeof name, "sensor-%07zu", i);
  return name;
}

// A fresh temp directory, or the caller's; the database in it is removed at the end.
class Workspace {
 public:
  explicit Workspace(const std::string& directory) {
    if (directory.empty()) owned_ = std::make_unique<WorkDir>("dsekp-bench-");
    db_ =
        (std::filesystem::path(owned_ ? owned_->path() : directory) / "sessions-bench.db").string();
    remove_database();
  }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  ~Workspace() { remove_database(); }
  [[nodiscard]] const std::string& database() const { return db_; }

 private:
  void remove_database() {
    std::error_code ignored;
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db_ + suffix, ignored);
  }
  std::unique_ptr<WorkDir> owned_;  // the temp directory, when the caller gave none
  std::string db_;
};

// One device's state as the edge holds it after the handshake and the first DATA frame.
class StateFactory {
 public:
  StateFactory(CryptoBackend& crypto, Rng& rng)
      : crypto_(crypto),
        rng_(rng),
        credentials_(bench_credentials("sensor-0000000")),
        edge_(crypto, [&] {
          EdgeConfig c;
          c.edge_salt = credentials_.edge_salt;
          return c;
        }()) {}

  void make(std::size_t index, EdgeDeviceState& state) {
    DeviceCredentials c;
    require(c.dev_id.assign(device_name(index)), "dev_id");
    std::array<std::uint8_t, kDevSecretSize> secret{};
    for (std::size_t b = 0; b < 8; ++b) secret[b] = static_cast<std::uint8_t>(index >> (8 * b));
    secret[31] = 0x5A;
    c.dev_secret = DevSecret::from(secret);
    c.edge_salt = credentials_.edge_salt;
    DeviceSession device(crypto_, c);
    const std::uint64_t now_ms = kStartMs + index;
    InitFrame init;
    require(device.start_handshake(static_cast<std::uint32_t>(now_ms / 1000), rng_, init),
            "start_handshake");
    InitOutcome ack;
    require(edge_.handle_init(init, c.dev_secret, state, now_ms, rng_, ack), "handle_init");
    require(device.handle_ack(ack.ack), "handle_ack");
    DataFrame frame;
    const std::uint8_t reading[] = R"({"t":24.0,"h":51.0})";
    require(device.seal(ByteView(reading, sizeof reading - 1), now_ms, frame), "seal");
    DataOutcome out;
    require(edge_.open_data(frame, state, now_ms, plaintext_, out), "open_data");
  }

 private:
  CryptoBackend& crypto_;
  Rng& rng_;
  DeviceCredentials credentials_;
  EdgeProtocol edge_;
  std::array<std::uint8_t, kMaxPayloadSize> plaintext_{};
};

void fill_working_set(StateFactory& factory, std::size_t count, CompactStateMap& map,
                      SessionsStats& stats) {
  std::vector<std::uint8_t> blob;
  std::uint64_t encoded_total = 0;
  const std::uint64_t before = resident_bytes();
  const auto start = Clock::now();
  for (std::size_t i = 0; i < count; ++i) {
    EdgeDeviceState state;
    factory.make(i, state);
    if (edge::encode_device_state(state, blob) != edge::StateCodecError::ok)
      throw std::runtime_error("encode_device_state failed");
    encoded_total += blob.size();
    if (!map.put(state.dev_id.str(), blob, 1)) throw std::runtime_error("working set put failed");
  }
  stats.create_s = seconds_since(start);
  stats.working_set_rss_bytes = resident_bytes() - before;
  stats.working_set_bytes_per_session =
      static_cast<double>(stats.working_set_rss_bytes) / static_cast<double>(count);
  stats.encoded_bytes_mean = static_cast<double>(encoded_total) / static_cast<double>(count);
  stats.dev_id_bytes = device_name(0).size();
  stats.table_slots = map.slot_count();
}

// The representation without the codec: EdgeDeviceState itself in a node-based map.
void measure_naive(const CompactStateMap& map, std::size_t count, SessionsStats& stats) {
  std::unordered_map<std::string, EdgeDeviceState> naive;
  const std::uint64_t before = resident_bytes();
  for (std::size_t i = 0; i < count; ++i) {
    const std::string name = device_name(i);
    EdgeDeviceState& state = naive[name];
    if (edge::decode_device_state(map.find(name)->blob, nullptr, state) !=
        edge::StateCodecError::ok)
      throw std::runtime_error("decode_device_state failed");
  }
  stats.naive_count = count;
  stats.naive_bytes_per_session =
      static_cast<double>(resident_bytes() - before) / static_cast<double>(count);
}

void measure_codec(const CompactStateMap& map, SessionsStats& stats) {
  constexpr int kRounds = 100'000;
  const ByteView blob = map.find(device_name(0))->blob;
  EdgeDeviceState state;
  std::vector<std::uint8_t> out;
  std::uint64_t start = thread_cpu_ns();
  for (int i = 0; i < kRounds; ++i) {
    if (edge::decode_device_state(blob, nullptr, state) != edge::StateCodecError::ok)
      throw std::runtime_error("decode_device_state failed");
  }
  stats.decode_ns = static_cast<double>(thread_cpu_ns() - start) / kRounds;
  start = thread_cpu_ns();
  for (int i = 0; i < kRounds; ++i) {
    if (edge::encode_device_state(state, out) != edge::StateCodecError::ok)
      throw std::runtime_error("encode_device_state failed");
  }
  stats.encode_ns = static_cast<double>(thread_cpu_ns() - start) / kRounds;
}

std::unique_ptr<edge::SqliteSessionStore> open_store(const std::string& path, bool full_sync) {
  edge::SqliteStoreOptions options;
  if (full_sync) options.synchronous = edge::SqliteStoreOptions::Synchronous::full;
  std::string error;
  auto store = edge::SqliteSessionStore::open(path, options, error);
  if (store == nullptr) throw std::runtime_error(error);
  return store;
}

void measure_store(const CompactStateMap& map, std::size_t count, const std::string& path,
                   bool full_sync, SessionsStats& stats) {
  stats.synchronous = full_sync ? "FULL" : "NORMAL";
  {
    auto store = open_store(path, full_sync);
    EdgeDeviceState state;
    DevId id;
    const auto start = Clock::now();
    for (std::size_t i = 0; i < count; ++i) {
      const std::string name = device_name(i);
      require(id.assign(name), "dev_id");
      if (edge::decode_device_state(map.find(name)->blob, &id, state) != edge::StateCodecError::ok)
        throw std::runtime_error("decode_device_state failed");
      std::uint64_t generation = edge::kAnyGeneration;
      const edge::StoreResult r = store->save(id, state, kStartMs + i, generation);
      if (!r.ok()) throw std::runtime_error(std::string("save: ") + store->last_error());
    }
    const double seconds = seconds_since(start);
    stats.save_us_mean = seconds * 1e6 / static_cast<double>(count);
    stats.saves_per_s = static_cast<double>(count) / seconds;
  }  // closing the last connection checkpoints the WAL into the main file and deletes it
  stats.database_bytes = std::filesystem::file_size(path);
  std::error_code no_wal;
  if (const auto wal = std::filesystem::file_size(path + "-wal", no_wal); !no_wal)
    stats.database_bytes += wal;
  stats.database_bytes_per_session =
      static_cast<double>(stats.database_bytes) / static_cast<double>(count);

  std::vector<std::size_t> order(count);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::shuffle(order.begin(), order.end(), std::mt19937_64(42));
  auto store = open_store(path, full_sync);
  EdgeDeviceState state;
  DevId id;
  const auto start = Clock::now();
  for (std::size_t i : order) {
    require(id.assign(device_name(i)), "dev_id");
    std::uint64_t generation = 0;
    if (!store->load(id, state, generation).ok() || generation != 1)
      throw std::runtime_error("load " + device_name(i) + " failed");
  }
  const double seconds = seconds_since(start);
  stats.load_us_mean = seconds * 1e6 / static_cast<double>(count);
  stats.loads_per_s = static_cast<double>(count) / seconds;
}

}  // namespace

SessionsStats measure_sessions(CryptoBackend& crypto, Rng& rng,
                               const SessionsBenchOptions& options) {
  if (options.count == 0) throw std::runtime_error("--count must be at least 1");
  const auto start = Clock::now();
  SessionsStats stats;
  stats.count = options.count;
  stats.backend = crypto.name();
  stats.sizeof_edge_session = sizeof(EdgeSession);
  stats.sizeof_pending_session = sizeof(PendingSession);
  stats.sizeof_edge_device_state = sizeof(EdgeDeviceState);

  Workspace workspace(options.directory);
  StateFactory factory(crypto, rng);
  CompactStateMap map;
  fill_working_set(factory, options.count, map, stats);
  measure_naive(map, std::min(options.count, options.naive_count), stats);
  measure_codec(map, stats);
  measure_store(map, options.count, workspace.database(), options.full_sync, stats);
  stats.total_s = seconds_since(start);
  return stats;
}

}  // namespace dsekp::bench
