// Figures for `dsekp bench sessions`: what N devices with one established session each cost the
// edge in memory (its working set) and on disk (the SQLite session store), and how fast states
// are saved and loaded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "dsekp/crypto.hpp"

namespace dsekp::bench {

struct SessionsBenchOptions {
  std::size_t count = 100'000;       // devices, each with one established session
  std::string directory;             // where the database goes; empty: a fresh temp directory
  bool full_sync = false;            // PRAGMA synchronous=FULL instead of NORMAL
  std::size_t naive_count = 20'000;  // devices for the unordered_map<EdgeDeviceState> reference
};

struct SessionsStats {
  std::size_t count = 0;
  std::string backend;
  // Sizes of the core's structs.
  std::size_t sizeof_edge_session = 0;
  std::size_t sizeof_pending_session = 0;
  std::size_t sizeof_edge_device_state = 0;
  // Working set: CompactStateMap (encoded states), measured as process RSS growth.
  double encoded_bytes_mean = 0;  // device_state_codec size of one device's state
  std::size_t dev_id_bytes = 0;
  std::size_t table_slots = 0;
  std::uint64_t working_set_rss_bytes = 0;
  double working_set_bytes_per_session = 0;
  // Reference: the same states as EdgeDeviceState in a std::unordered_map, RSS growth.
  std::size_t naive_count = 0;
  double naive_bytes_per_session = 0;
  // SQLite store.
  std::string synchronous;
  std::uint64_t database_bytes = 0;  // main file after close (WAL checkpointed)
  double database_bytes_per_session = 0;
  double save_us_mean = 0;  // one transaction (autocommit) per save, as the edge persists a frame
  double saves_per_s = 0;
  double load_us_mean = 0;  // random order, decode included, file in the OS page cache
  double loads_per_s = 0;
  // Codec and set-up.
  double encode_ns = 0;
  double decode_ns = 0;
  double create_s = 0;  // real handshake + first DATA frame for every device
  double total_s = 0;
};

/// Runs the measurement with real handshakes on `crypto` (every device its own secret and keys).
/// Throws std::runtime_error on any failure.
SessionsStats measure_sessions(CryptoBackend& crypto, Rng& rng,
                               const SessionsBenchOptions& options);

}  // namespace dsekp::bench
