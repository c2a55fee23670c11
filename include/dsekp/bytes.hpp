// Byte views, fixed-size strong byte types, constant-time comparison and secret wiping.
//
// Every key, nonce, proof and tag in the protocol has its own fixed-size type, so a tag cannot be
// passed where a key is expected and a 12-byte nonce cannot be confused with a 16-byte proof.
// Secret types wipe themselves when destroyed. Comparison of authenticators is constant-time.
// Nothing here allocates or throws: this header is part of the device path.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace dsekp {

using ByteView = std::span<const std::uint8_t>;
using MutableByteView = std::span<std::uint8_t>;

/// Overwrites `bytes` with zeros in a way the optimiser may not remove.
void secure_wipe(MutableByteView bytes) noexcept;

/// True when `a` and `b` have equal length and contents. Time depends only on the lengths.
[[nodiscard]] bool constant_time_equal(ByteView a, ByteView b) noexcept;

/// True if the two byte ranges share at least one byte.
[[nodiscard]] inline bool overlap(ByteView a, ByteView b) noexcept {
  if (a.empty() || b.empty()) return false;
  const auto a0 = reinterpret_cast<std::uintptr_t>(a.data());
  const auto b0 = reinterpret_cast<std::uintptr_t>(b.data());
  return a0 < b0 + b.size() && b0 < a0 + a.size();
}

/// A fixed-size, non-secret byte string with a distinct type per `Tag` (nonces, proofs, tags).
template <std::size_t N, typename Tag>
class FixedBytes {
 public:
  static constexpr std::size_t size_bytes = N;
  constexpr FixedBytes() noexcept = default;
  /// From exactly N bytes: the length is part of the argument's type, so a short or long input
  /// does not compile. For a length known only at run time, use assign().
  static FixedBytes from(std::span<const std::uint8_t, N> src) noexcept {
    FixedBytes out;
    for (std::size_t i = 0; i < N; ++i) out.bytes_[i] = src[i];
    return out;
  }
  /// Copies `src` if it is exactly N bytes long; otherwise returns false and changes nothing.
  [[nodiscard]] bool assign(ByteView src) noexcept {
    if (src.size() != N) return false;
    for (std::size_t i = 0; i < N; ++i) bytes_[i] = src[i];
    return true;
  }
  /// Fixed-extent views: they convert to ByteView / MutableByteView wherever a length is dynamic.
  [[nodiscard]] std::span<const std::uint8_t, N> view() const noexcept { return bytes_; }
  [[nodiscard]] std::span<std::uint8_t, N> mutable_view() noexcept { return bytes_; }
  [[nodiscard]] const std::uint8_t* data() const noexcept { return bytes_.data(); }
  [[nodiscard]] std::uint8_t* data() noexcept { return bytes_.data(); }
  [[nodiscard]] static constexpr std::size_t size() noexcept { return N; }
  /// Constant-time equality: these values are often authenticators.
  [[nodiscard]] bool equals(const FixedBytes& other) const noexcept {
    return constant_time_equal(view(), other.view());
  }

 private:
  std::array<std::uint8_t, N> bytes_{};
};

/// A fixed-size secret (keys, IV bases, PRKs). Wiped on destruction and on move-from; copies are
/// explicit (`clone`) so that secret material is not duplicated by accident.
template <std::size_t N, typename Tag>
class SecretBytes {
 public:
  static constexpr std::size_t size_bytes = N;
  SecretBytes() noexcept = default;
  ~SecretBytes() { secure_wipe(MutableByteView(bytes_)); }
  SecretBytes(const SecretBytes&) = delete;
  SecretBytes& operator=(const SecretBytes&) = delete;
  SecretBytes(SecretBytes&& other) noexcept : bytes_(other.bytes_) {
    secure_wipe(MutableByteView(other.bytes_));
  }
  SecretBytes& operator=(SecretBytes&& other) noexcept {
    if (this != &other) {
      bytes_ = other.bytes_;
      secure_wipe(MutableByteView(other.bytes_));
    }
    return *this;
  }
  /// From exactly N bytes (checked at compile time, as FixedBytes::from).
  static SecretBytes from(std::span<const std::uint8_t, N> src) noexcept {
    SecretBytes out;
    for (std::size_t i = 0; i < N; ++i) out.bytes_[i] = src[i];
    return out;
  }
  /// Copies `src` if it is exactly N bytes long; otherwise returns false and changes nothing (a
  /// 16-byte "DEV_SECRET" must be refused, not padded with zeros).
  [[nodiscard]] bool assign(ByteView src) noexcept {
    if (src.size() != N) return false;
    for (std::size_t i = 0; i < N; ++i) bytes_[i] = src[i];
    return true;
  }
  [[nodiscard]] SecretBytes clone() const noexcept { return from(view()); }
  [[nodiscard]] std::span<const std::uint8_t, N> view() const noexcept { return bytes_; }
  [[nodiscard]] std::span<std::uint8_t, N> mutable_view() noexcept { return bytes_; }
  [[nodiscard]] static constexpr std::size_t size() noexcept { return N; }
  void wipe() noexcept { secure_wipe(MutableByteView(bytes_)); }

 private:
  std::array<std::uint8_t, N> bytes_{};
};

/// A byte buffer of at most `Capacity` bytes stored inline (no heap): ciphertexts, plaintexts.
template <std::size_t Capacity>
class BoundedBytes {
 public:
  static constexpr std::size_t capacity = Capacity;
  [[nodiscard]] bool assign(ByteView src) noexcept {
    if (src.size() > Capacity) return false;
    for (std::size_t i = 0; i < src.size(); ++i) bytes_[i] = src[i];
    size_ = src.size();
    return true;
  }
  /// Sets the length after writing through `storage()`; fails if `n` exceeds the capacity.
  [[nodiscard]] bool resize(std::size_t n) noexcept {
    if (n > Capacity) return false;
    size_ = n;
    return true;
  }
  [[nodiscard]] ByteView view() const noexcept { return ByteView(bytes_.data(), size_); }
  [[nodiscard]] MutableByteView storage() noexcept { return MutableByteView(bytes_); }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  void clear() noexcept {
    secure_wipe(MutableByteView(bytes_.data(), size_));
    size_ = 0;
  }

 private:
  std::array<std::uint8_t, Capacity> bytes_{};
  std::size_t size_ = 0;
};

// Big-endian integer helpers: every integer on the wire and in every transcript is big-endian.
// Written out byte by byte, not as loops: GCC -O2 does not unroll the loops, and the written-out
// form compiles to one byte-swapped load or store (they run several times for every frame).
inline void store_be16(std::uint8_t* p, std::uint16_t v) noexcept {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
}
inline void store_be32(std::uint8_t* p, std::uint32_t v) noexcept {
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
}
inline void store_be64(std::uint8_t* p, std::uint64_t v) noexcept {
  store_be32(p, static_cast<std::uint32_t>(v >> 32));
  store_be32(p + 4, static_cast<std::uint32_t>(v));
}
inline std::uint16_t load_be16(const std::uint8_t* p) noexcept {
  return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}
inline std::uint32_t load_be32(const std::uint8_t* p) noexcept {
  return (static_cast<std::uint32_t>(p[0]) << 24) | (static_cast<std::uint32_t>(p[1]) << 16) |
         (static_cast<std::uint32_t>(p[2]) << 8) | static_cast<std::uint32_t>(p[3]);
}
inline std::uint64_t load_be64(const std::uint8_t* p) noexcept {
  return (static_cast<std::uint64_t>(load_be32(p)) << 32) | load_be32(p + 4);
}

}  // namespace dsekp
