// Deterministic random sources for tests, golden traces and fuzzing.
//
// NOT CRYPTOGRAPHIC. Neither class may be linked into a production edge or device: their output is
// predictable by design, so keys and nonces drawn from them are public. They exist so that a test
// or a fuzzer run can be repeated bit for bit.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "dsekp/crypto.hpp"

namespace dsekp {

/// NOT CRYPTOGRAPHIC. A byte stream fully determined by a 64-bit seed: std::mt19937_64, whose
/// output sequence the C++ standard specifies exactly, so every platform and standard library
/// produces the same bytes. Each 64-bit output becomes 8 bytes, least significant first. The
/// stream does not depend on how it is split into fill() calls: fill(3) then fill(5) gives the
/// same 8 bytes as fill(8).
class SeededRng final : public Rng {
 public:
  explicit SeededRng(std::uint64_t seed) noexcept;
  Error fill(MutableByteView out) noexcept override;

 private:
  std::mt19937_64 engine_;
  std::array<std::uint8_t, 8> word_{};  // bytes of the current engine output
  std::size_t word_used_ = 8;           // bytes of word_ already handed out
};

/// NOT CRYPTOGRAPHIC. Replays a fixed script: the i-th fill() returns the i-th byte string, which
/// must have exactly the requested length. Used for golden traces with fixed nonces. A request
/// after the script is used up, or of a length other than the next entry's, fails with
/// Error::invalid_argument, zeroes the output and consumes nothing: a trace that asks for
/// different randomness than it was recorded with must fail loudly, not drift.
class ScriptedRng final : public Rng {
 public:
  explicit ScriptedRng(std::vector<std::vector<std::uint8_t>> script);
  Error fill(MutableByteView out) noexcept override;

  /// Number of entries not yet returned.
  [[nodiscard]] std::size_t remaining() const noexcept { return script_.size() - next_; }

 private:
  std::vector<std::vector<std::uint8_t>> script_;
  std::size_t next_ = 0;
};

}  // namespace dsekp
