// Per-frame figures for `dsekp bench frames`: wire sizes of the reference reading in every
// profile, and the edge's per-frame open cost against a bare AES-128-GCM open (the floor).
#pragma once

#include <cstddef>
#include <string>

#include "dsekp/crypto.hpp"

namespace dsekp::bench {

struct FrameSizes {
  std::size_t plaintext = 0;      // the reading, e.g. {"t":24.0,"h":51.0}
  std::size_t psk_json = 0;       // paper: 154.8 bytes on average
  std::size_t dsekp_json = 0;     // paper: 170.8 bytes on average
  std::size_t dsekp_compact = 0;  // target <= 64
  std::size_t psk_compact = 0;
};

struct FrameCosts {
  std::string backend;
  std::size_t frames = 0;           // frames per timed repetition
  double bare_gcm_open_ns = 0;      // floor: AES-128-GCM open of the same plaintext, no AAD
  double gcm_open_with_aad_ns = 0;  // the same plus the 38-byte AAD DSEKP authenticates
  double device_seal_json_ns = 0;   // DeviceSession::seal + JSON encode
  double edge_open_json_ns = 0;  // simdjson decode + base64, device lookup, decrypt, replay window
  double edge_open_json_portable_ns = 0;  // the same with the portable (jsmn) decoder
  double edge_open_compact_ns = 0;        // decode compact, device lookup, decrypt, replay window
  double psk_open_json_ns = 0;  // baseline: decode JSON (simdjson) + decrypt, no replay window
  // The targets' ratios: each repetition of the path timed right after as many floor opens, the
  // median of those repetitions' ratios (steadier than the ratio of two medians taken apart).
  double edge_open_json_over_floor = 0;
  double edge_open_compact_over_floor = 0;
};

/// Sizes for the reference reading from dev_id esp32-01 (sessctr 5 digits, sendts 13 digits).
FrameSizes measure_frame_sizes(CryptoBackend& crypto, Rng& rng);

/// Median over `repetitions` of the thread CPU time per frame, `frames` frames each, with
/// `devices` registered devices in the edge's lookup table.
FrameCosts measure_frame_costs(CryptoBackend& crypto, Rng& rng, std::size_t frames,
                               std::size_t repetitions, std::size_t devices);

}  // namespace dsekp::bench
