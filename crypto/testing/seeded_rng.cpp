// NOT CRYPTOGRAPHIC: deterministic Rng implementations for tests and fuzzing (see seeded_rng.hpp).
#include "crypto/testing/seeded_rng.hpp"

#include <algorithm>
#include <utility>

namespace dsekp {

SeededRng::SeededRng(std::uint64_t seed) noexcept : engine_(seed) {}

Error SeededRng::fill(MutableByteView out) noexcept {
  for (std::uint8_t& byte : out) {
    if (word_used_ == word_.size()) {
      // Byte order fixed explicitly (not memcpy) so the stream is the same on any endianness.
      std::uint64_t v = engine_();
      for (std::uint8_t& b : word_) {
        b = static_cast<std::uint8_t>(v);
        v >>= 8;
      }
      word_used_ = 0;
    }
    byte = word_[word_used_++];
  }
  return Error::ok;
}

ScriptedRng::ScriptedRng(std::vector<std::vector<std::uint8_t>> script)
    : script_(std::move(script)) {}

Error ScriptedRng::fill(MutableByteView out) noexcept {
  if (next_ == script_.size() || script_[next_].size() != out.size()) {
    std::fill(out.begin(), out.end(), std::uint8_t{0});
    return Error::invalid_argument;
  }
  std::copy(script_[next_].begin(), script_[next_].end(), out.begin());
  ++next_;
  return Error::ok;
}

}  // namespace dsekp
