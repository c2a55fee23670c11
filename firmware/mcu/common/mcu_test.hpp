// Helpers of the QEMU test programs (kat, golden, cost): line-oriented output over semihosting,
// failure counting, and a fixed-script random source. Test code only.
//
// Output lines have the form "<KIND> <name> <value>"; scripts/mcu/compare_golden.py and
// scripts/mcu/cost_report.py read them. Every program ends with "<KIND>_DONE <n> failures=<f>"
// and exits with 0 only if f is 0 (QEMU exits with the program's exit code).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "dsekp/bytes.hpp"
#include "dsekp/crypto.hpp"

namespace mcu_test {

inline int g_failures = 0;
inline int g_checks = 0;

inline void put(std::string_view s) {
  for (char c : s) std::putchar(c);
}

inline void put_u64(std::uint64_t v) {
  char buf[24];
  int i = 0;
  do {
    buf[i++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (i > 0) std::putchar(buf[--i]);
}

inline void put_hex(dsekp::ByteView b) {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (std::uint8_t x : b) {
    std::putchar(kDigits[x >> 4]);
    std::putchar(kDigits[x & 15]);
  }
}

inline void line_begin(std::string_view kind, std::string_view name) {
  put(kind);
  std::putchar(' ');
  put(name);
  std::putchar(' ');
}

/// Records one check; prints "FAIL <what>" when it does not hold.
inline bool check(bool ok, std::string_view what) {
  ++g_checks;
  if (!ok) {
    ++g_failures;
    put("FAIL ");
    put(what);
    std::putchar('\n');
  }
  return ok;
}

inline bool equal(dsekp::ByteView a, dsekp::ByteView b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

inline dsekp::ByteView bytes(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

/// Decodes lowercase/uppercase hex into `out`; returns the byte count (0 on bad input or
/// insufficient room, which the callers' checks then catch).
inline std::size_t from_hex(std::string_view hex, dsekp::MutableByteView out) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (hex.size() % 2 != 0 || hex.size() / 2 > out.size()) return 0;
  for (std::size_t i = 0; i < hex.size() / 2; ++i) {
    const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return 0;
    out[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  return hex.size() / 2;
}

/// Ends the run: prints the summary line and exits (QEMU then exits with the same code).
[[noreturn]] inline void finish(std::string_view kind) {
  put(kind);
  put("_DONE ");
  put_u64(static_cast<std::uint64_t>(g_checks));
  put(" failures=");
  put_u64(static_cast<std::uint64_t>(g_failures));
  std::putchar('\n');
  std::fflush(stdout);
  std::exit(g_failures == 0 ? 0 : 1);
}

/// NOT CRYPTOGRAPHIC. Replays fixed byte strings, one per request, each of exactly the requested
/// length (as crypto/testing's ScriptedRng, without its heap): a program that asks for other
/// randomness than the trace was recorded with fails instead of drifting.
class FixedScript {
 public:
  FixedScript(const dsekp::ByteView* entries, std::size_t count) noexcept
      : entries_(entries), count_(count) {}
  bool next(dsekp::MutableByteView out) noexcept {
    if (next_ == count_ || entries_[next_].size() != out.size()) {
      for (auto& b : out) b = 0;
      return false;
    }
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = entries_[next_][i];
    ++next_;
    return true;
  }
  /// For the SDK's C random callback (dsekp_random_fn).
  static int callback(void* user, std::uint8_t* out, std::size_t len) {
    return static_cast<FixedScript*>(user)->next(dsekp::MutableByteView(out, len)) ? 0 : -1;
  }

 private:
  const dsekp::ByteView* entries_;
  std::size_t count_;
  std::size_t next_ = 0;
};

/// The same script as the core's Rng interface.
class FixedScriptRng final : public dsekp::Rng {
 public:
  explicit FixedScriptRng(FixedScript& script) noexcept : script_(script) {}
  dsekp::Error fill(dsekp::MutableByteView out) noexcept override {
    return script_.next(out) ? dsekp::Error::ok : dsekp::Error::invalid_argument;
  }

 private:
  FixedScript& script_;
};

}  // namespace mcu_test
