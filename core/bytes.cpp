// Secret wiping and constant-time comparison (declared in dsekp/bytes.hpp).
#include "dsekp/bytes.hpp"

#include <mbedtls/platform_util.h>

#include <cstring>

namespace dsekp {

void secure_wipe(MutableByteView bytes) noexcept {
  // mbedtls_platform_zeroize is built so that the compiler cannot prove the stores dead (it calls
  // memset through a volatile function pointer or uses explicit_bzero), unlike a plain memset
  // right before the buffer goes out of scope. The same function exists in every mbedTLS build,
  // including the MCU one.
  if (bytes.empty()) return;
  mbedtls_platform_zeroize(bytes.data(), bytes.size());
}

namespace {
// Tells the optimiser it cannot know `v` here, so it cannot turn the accumulation below into an
// early-exit comparison (memcmp-style) once it sees the result only tested against zero.
inline void opaque(std::uint64_t& v) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  __asm__ __volatile__("" : "+r"(v));
#else
  volatile std::uint64_t sink = v;
  v = sink;
#endif
}
}  // namespace

bool constant_time_equal(ByteView a, ByteView b) noexcept {
  // Lengths are public (fixed by the protocol); only the contents must not leak via timing.
  if (a.size() != b.size()) return false;
  // Eight bytes at a time (keys, nonces and tags are 12-32 bytes), no branch on the data.
  std::uint64_t diff = 0;
  std::size_t i = 0;
  for (; i + 8 <= a.size(); i += 8) {
    std::uint64_t x = 0;
    std::uint64_t y = 0;
    std::memcpy(&x, a.data() + i, 8);
    std::memcpy(&y, b.data() + i, 8);
    diff |= x ^ y;
    opaque(diff);
  }
  for (; i < a.size(); ++i) {
    diff |= static_cast<std::uint64_t>(a[i] ^ b[i]);
    opaque(diff);
  }
  // (diff | -diff) has its top bit set exactly when diff != 0.
  return ((diff | (0 - diff)) >> 63) == 0;
}

}  // namespace dsekp
