// Secret wiping and constant-time comparison (declared in dsekp/bytes.hpp).
#include "dsekp/bytes.hpp"

#include <mbedtls/platform_util.h>

namespace dsekp {

void secure_wipe(MutableByteView bytes) noexcept {
  // mbedtls_platform_zeroize is built so that the compiler cannot prove the stores dead (it calls
  // memset through a volatile function pointer or uses explicit_bzero), unlike a plain memset
  // right before the buffer goes out of scope. The same function exists in every mbedTLS build,
  // including the MCU one.
  if (bytes.empty()) return;
  mbedtls_platform_zeroize(bytes.data(), bytes.size());
}

bool constant_time_equal(ByteView a, ByteView b) noexcept {
  // Lengths are public (fixed by the protocol); only the contents must not leak via timing.
  if (a.size() != b.size()) return false;
  // Read the inputs through volatile so the compiler cannot turn the loop into an early-exit
  // comparison (memcmp-style) once it sees the result is only tested against zero.
  const volatile std::uint8_t* pa = a.data();
  const volatile std::uint8_t* pb = b.data();
  std::uint32_t diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<std::uint32_t>(pa[i] ^ pb[i]);
  // diff is 0..255: (diff - 1) >> 8 has its low bit set only when diff == 0. No branch on data.
  return ((diff - 1U) >> 8U) & 1U;
}

}  // namespace dsekp
