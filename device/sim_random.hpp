// The simulator's own seeded randomness (NOT CRYPTOGRAPHIC): sensor walks, reset draws and start
// jitter, reproducible from --seed. The protocol's randomness (sessctr, nonces, PSK IVs) never
// comes from here; it comes from the OS-seeded DRBG.
//
// Why SplitMix64 and not <random>: the standard distributions are implementation-defined, so the
// same seed could give other readings with another standard library; this generator and the
// mappings below are exact integer arithmetic, identical everywhere. It is also 8 bytes per
// stream, which matters with 10,000 devices in one process (std::mt19937_64 is 2.5 KB).
#pragma once

#include <cstdint>

namespace dsekp::device {

class SimRandom {
 public:
  explicit SimRandom(std::uint64_t seed) noexcept : state_(seed) {}

  /// A stream for one purpose of one device: independent of the other streams of the same seed.
  static SimRandom derive(std::uint64_t seed, std::uint64_t device_index,
                          std::uint64_t purpose) noexcept {
    SimRandom mix(seed ^ (purpose * 0xD1B54A32D192ED03u));
    mix.state_ += device_index * 0x9E3779B97F4A7C15u;
    return SimRandom(mix.next());
  }

  /// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014).
  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
  }

  /// Uniform in [0, 1) with 53 random bits.
  double uniform01() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  /// Uniform integer in [0, n) (n > 0); the multiply-shift bias is below 2^-32 for our n.
  std::uint64_t below(std::uint64_t n) noexcept {
    __extension__ using Wide =
        unsigned __int128;  // GCC/Clang; the extension keeps -Wpedantic quiet
    return static_cast<std::uint64_t>((static_cast<Wide>(next()) * n) >> 64);
  }

 private:
  std::uint64_t state_;
};

}  // namespace dsekp::device
