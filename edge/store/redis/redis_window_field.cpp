// The replay window as a field of the device's hash (see redis_window_field.hpp).
#include "redis_window_field.hpp"

#include "edge/store/session_tag.hpp"

#include <array>
#include <charconv>
#include <cstdio>

namespace dsekp::edge::redis {
namespace {

constexpr std::string_view kTagLabel = "dsekp redis session tag v1";
constexpr std::uint64_t kMaxTop = std::uint64_t{1} << 32;

bool accepted(const ReplayWindow& window, std::uint64_t seq) {
  return seq < kMaxTop && window.check(static_cast<std::uint32_t>(seq)) == Error::replay;
}

// ReplayWindow keeps whole 64-bit words up to date, so bits a little beyond its size can be set
// (seqs accepted earlier that slid out of the window). They decide nothing, but they are carried
// over too, so that a window read back from its field equals the one written, bit for bit.
std::uint64_t bits_kept(const ReplayWindow& window, std::uint64_t top) {
  const std::uint64_t words = (window.size() + 63) / 64;
  return top < words * 64 ? top : words * 64;
}

bool bit_set(const ReplayWindow& window, std::uint64_t i) {
  return (window.bitmap()[static_cast<std::size_t>(i / 64)] >> (i % 64)) & 1u;
}

}  // namespace

std::string window_field_name(std::uint16_t sessctr) {
  return "w:" + std::to_string(sessctr);
}

std::string session_tag(const EdgeSession& session) {
  // SHA-256 of a few bytes fails only when OpenSSL cannot allocate; an empty tag then matches
  // no stored field, so the session is treated as unknown to the cache (never as another's).
  return edge::session_tag(kTagLabel, session.keys.up);
}

std::string encode_window_field(std::string_view tag, const ReplayWindow& window) {
  std::string out(tag);
  out.resize(kSessionTagChars, '0');
  std::array<char, kWindowTopChars + 1> top{};
  std::snprintf(top.data(), top.size(), "%010llu", static_cast<unsigned long long>(window.top()));
  out.append(top.data(), kWindowTopChars);
  std::string ring(kWindowRingBytes, '\0');
  const std::uint64_t below = bits_kept(window, window.top());
  for (std::uint64_t i = 0; i < below; ++i) {
    const std::uint64_t seq = window.top() - 1 - i;
    if (!bit_set(window, i)) continue;
    const std::size_t pos = static_cast<std::size_t>(seq % ReplayWindow::kMaxSize);
    ring[pos / 8] =
        static_cast<char>(static_cast<unsigned char>(ring[pos / 8]) | (1u << (pos % 8)));
  }
  out.append(ring);
  return out;
}

WindowFieldMatch decode_window_field(std::string_view value, std::string_view tag,
                                     ReplayWindow& window) {
  if (value.size() != kWindowFieldSize) return WindowFieldMatch::malformed;
  const std::string_view top_text = value.substr(kSessionTagChars, kWindowTopChars);
  std::uint64_t top = 0;
  const auto [end, ec] = std::from_chars(top_text.data(), top_text.data() + top_text.size(), top);
  if (ec != std::errc{} || end != top_text.data() + top_text.size() || top > kMaxTop)
    return WindowFieldMatch::malformed;
  if (tag.size() != kSessionTagChars || value.substr(0, kSessionTagChars) != tag)
    return WindowFieldMatch::other_session;
  const std::string_view ring = value.substr(kSessionTagChars + kWindowTopChars);
  std::array<std::uint64_t, ReplayWindow::kMaxSize / 64> bits{};
  const std::uint64_t below = bits_kept(window, top);
  for (std::uint64_t i = 0; i < below; ++i) {
    const std::size_t pos = static_cast<std::size_t>((top - 1 - i) % ReplayWindow::kMaxSize);
    if ((static_cast<unsigned char>(ring[pos / 8]) >> (pos % 8)) & 1u)
      bits[static_cast<std::size_t>(i / 64)] |= std::uint64_t{1} << (i % 64);
  }
  window.restore(top, bits);
  return WindowFieldMatch::same_session;
}

std::vector<std::uint32_t> newly_accepted(const ReplayWindow& before, const ReplayWindow& after) {
  std::vector<std::uint32_t> seqs;
  const std::uint64_t below = after.top() < after.size() ? after.top() : after.size();
  for (std::uint64_t i = below; i-- > 0;) {
    const std::uint64_t seq = after.top() - 1 - i;
    if (accepted(after, seq) && !accepted(before, seq))
      seqs.push_back(static_cast<std::uint32_t>(seq));
  }
  return seqs;
}

}  // namespace dsekp::edge::redis
