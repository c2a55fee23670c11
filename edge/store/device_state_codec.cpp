// Encoder and strict decoder of the device-state format (layout in device_state_codec.hpp).
//
// The encoder runs the same checks as the decoder, so a state that saves always loads again: a
// saved row that then failed to load would lock its device out until it re-handshakes.
#include "device_state_codec.hpp"

#include <array>
#include <string_view>
#include <utility>

#include "state_bytes.hpp"

namespace dsekp::edge {
namespace {

using detail::ByteReader;
using detail::ByteWriter;
using Bitmap = std::array<std::uint64_t, ReplayWindow::kMaxSize / 64>;

constexpr std::uint8_t kFlagPending = 1u << 0;
constexpr std::uint8_t kFlagNewestInit = 1u << 1;
constexpr std::uint8_t kFlagBucket = 1u << 2;
// Added after the format's first release: states written before it lack it (JSON replies).
constexpr std::uint8_t kFlagCompactReplies = 1u << 3;
// The ratchet (PROTOCOL.md 6.6): an edge without it refuses such a state (bad_flags) instead of
// loading it without the device's secret.
constexpr std::uint8_t kFlagRatchet = 1u << 4;
constexpr std::uint8_t kKnownFlags =
    kFlagPending | kFlagNewestInit | kFlagBucket | kFlagCompactReplies | kFlagRatchet;
constexpr std::uint64_t kSeqSpace = std::uint64_t{1} << 32;  // seqs are u32; top/next <= 2^32

std::size_t window_words(std::uint32_t size) noexcept {
  return (size + 63) / 64;
}

// The window invariants the core maintains: size in range, top within the seq space, bit 0 set
// once anything was accepted, and no bit for a seq below 0 (distance >= top).
StateCodecError check_window(std::uint32_t size, std::uint64_t top, const Bitmap& bits) noexcept {
  if (size == 0 || size > ReplayWindow::kMaxSize || top > kSeqSpace)
    return StateCodecError::bad_replay_window;
  const std::size_t words = window_words(size);
  if (top > 0 && (bits[0] & 1u) == 0) return StateCodecError::bad_replay_window;
  if (top < std::uint64_t{words} * 64) {
    const auto first = static_cast<std::size_t>(top / 64);
    const auto bit = static_cast<unsigned>(top % 64);
    const std::uint64_t allowed = bit == 0 ? 0 : (std::uint64_t{1} << bit) - 1;
    if ((bits[first] & ~allowed) != 0) return StateCodecError::bad_replay_window;
    for (std::size_t i = first + 1; i < words; ++i) {
      if (bits[i] != 0) return StateCodecError::bad_replay_window;
    }
  }
  return StateCodecError::ok;
}

StateCodecError check_session(const EdgeSession& s) noexcept {
  const ReplayWindow& w = s.uplink_window;
  if (StateCodecError e = check_window(w.size(), w.top(), w.bitmap()); e != StateCodecError::ok)
    return e;
  return s.downlink_seq > kSeqSpace ? StateCodecError::bad_seq : StateCodecError::ok;
}

std::uint32_t used_mask(const InitReplayCache& cache) noexcept {
  std::uint32_t mask = 0;
  for (std::size_t i = 0; i < cache.entries.size(); ++i) {
    if (cache.entries[i].used) mask |= std::uint32_t{1} << i;
  }
  return mask;
}

// Fields that only exist once an INIT has bound the state to a device.
bool has_bound_content(bool pending, std::uint32_t established, bool newest,
                       std::uint32_t used) noexcept {
  return pending || established != 0 || newest || used != 0;
}

// A secret belongs to a device (a state in ratchet mode is bound), and a pending session's INIT
// verified under the current secret (the edge steps only when it replaces or confirms the
// pending session); without the ratchet both epochs are 0.
StateCodecError check_ratchet(const EdgeDeviceState& s) noexcept {
  const std::uint32_t pending_epoch = s.has_pending ? s.pending.ratchet_epoch : 0;
  if (!s.ratchet.active)
    return s.ratchet.epoch == 0 && pending_epoch == 0 ? StateCodecError::ok
                                                      : StateCodecError::inconsistent_state;
  return s.dev_id.size() != 0 && (!s.has_pending || pending_epoch == s.ratchet.epoch)
             ? StateCodecError::ok
             : StateCodecError::inconsistent_state;
}

StateCodecError check_for_encode(const EdgeDeviceState& s) noexcept {
  if (s.established_count > kMaxEstablishedSessions) return StateCodecError::too_many_sessions;
  if (s.seen_inits.next >= kInitReplayCacheSize) return StateCodecError::bad_replay_cache;
  if (s.dev_id.size() == 0 && has_bound_content(s.has_pending, s.established_count,
                                                s.has_newest_init, used_mask(s.seen_inits)))
    return StateCodecError::inconsistent_state;
  if (StateCodecError e = check_ratchet(s); e != StateCodecError::ok) return e;
  if (s.has_pending) {
    if (!(s.pending.init.dev_id == s.dev_id) || s.pending.session.sessctr != s.pending.init.sessctr)
      return StateCodecError::inconsistent_state;
    if (StateCodecError e = check_session(s.pending.session); e != StateCodecError::ok) return e;
  }
  for (std::uint32_t i = 0; i < s.established_count; ++i) {
    if (StateCodecError e = check_session(s.established[i]); e != StateCodecError::ok) return e;
  }
  return StateCodecError::ok;
}

std::size_t session_size(const EdgeSession& s) noexcept {
  return 2 + 2 * (kAeadKeySize + kNonceSize) + 2 + 8 + 8 * window_words(s.uplink_window.size()) +
         8 + 8 + 8 + 4;
}

// Exact size of the encoding, so the output is allocated once: a growing vector would leave
// copies of the keys behind in the blocks it frees.
std::size_t encoded_size(const EdgeDeviceState& s) noexcept {
  std::size_t n = 1 + 1 + s.dev_id.size() + 1 + 4 + 4 + 1 + 4 + 8 + 1 + 4;
  for (const auto& entry : s.seen_inits.entries) n += entry.used ? kNonceSize + 8 : 0;
  if (s.has_pending)
    n +=
        2 + 4 + kNonceSize + kProofSize + kNonceSize + kProofSize + session_size(s.pending.session);
  for (std::uint32_t i = 0; i < s.established_count; ++i) n += session_size(s.established[i]);
  if (s.ratchet.active) n += 4 + kDevSecretSize + 4;
  return n;
}

void write_session(ByteWriter& w, const EdgeSession& s) {
  w.u16(s.sessctr);
  w.bytes(s.keys.up.key.view());
  w.bytes(s.keys.up.iv_base.view());
  w.bytes(s.keys.down.key.view());
  w.bytes(s.keys.down.iv_base.view());
  const ReplayWindow& window = s.uplink_window;
  w.u16(static_cast<std::uint16_t>(window.size()));
  w.u64(window.top());
  for (std::size_t i = 0; i < window_words(window.size()); ++i) w.u64(window.bitmap()[i]);
  w.u64(s.downlink_seq);
  w.u64(s.created_ms);
  w.u64(s.last_seen_ms);
  w.u32(s.serial);
}

void write_state(ByteWriter& w, const EdgeDeviceState& s) {
  const TokenBucketState bucket = s.init_bucket.state();
  w.u8(kDeviceStateFormatVersion);
  w.u8(static_cast<std::uint8_t>(s.dev_id.size()));
  w.bytes(s.dev_id.view());
  std::uint8_t flags = 0;
  if (s.has_pending) flags |= kFlagPending;
  if (s.has_newest_init) flags |= kFlagNewestInit;
  if (bucket.initialised) flags |= kFlagBucket;
  if (s.compact_replies) flags |= kFlagCompactReplies;
  if (s.ratchet.active) flags |= kFlagRatchet;
  w.u8(flags);
  w.u32(s.has_newest_init ? s.newest_init_t : 0);
  w.u32(s.next_session_serial);
  w.u8(static_cast<std::uint8_t>(s.established_count));
  w.u32(bucket.tokens);
  w.u64(bucket.last_refill_ms);
  w.u8(static_cast<std::uint8_t>(s.seen_inits.next));
  w.u32(used_mask(s.seen_inits));
  for (const auto& entry : s.seen_inits.entries) {
    if (!entry.used) continue;
    w.bytes(entry.dev_nonce.view());
    w.u64(entry.expires_s);
  }
  if (s.has_pending) {
    const InitFrame& init = s.pending.init;
    w.u16(init.sessctr);
    w.u32(init.t);
    w.bytes(init.dev_nonce.view());
    w.bytes(init.proof.view());
    w.bytes(s.pending.edge_nonce.view());
    w.bytes(s.pending.ack_proof.view());
    write_session(w, s.pending.session);
  }
  for (std::uint32_t i = 0; i < s.established_count; ++i) write_session(w, s.established[i]);
  if (s.ratchet.active) {
    w.u32(s.ratchet.epoch);
    w.bytes(s.ratchet.secret.view());
    w.u32(s.has_pending ? s.pending.ratchet_epoch : 0);
  }
}

// Reads n bytes into a FixedBytes or SecretBytes (both refuse a wrong length in assign()).
template <typename T>
bool read_into(ByteReader& r, T& out) noexcept {
  ByteView v;
  return r.bytes(T::size(), v) && out.assign(v);
}

StateCodecError read_session(ByteReader& r, EdgeSession& s) noexcept {
  constexpr auto kTruncated = StateCodecError::truncated;
  std::uint16_t size = 0;
  std::uint64_t top = 0;
  if (!r.u16(s.sessctr) || !read_into(r, s.keys.up.key) || !read_into(r, s.keys.up.iv_base) ||
      !read_into(r, s.keys.down.key) || !read_into(r, s.keys.down.iv_base) || !r.u16(size) ||
      !r.u64(top))
    return kTruncated;
  // Range-check the size before it decides how many words to read.
  if (size == 0 || size > ReplayWindow::kMaxSize) return StateCodecError::bad_replay_window;
  Bitmap bits{};
  for (std::size_t i = 0; i < window_words(size); ++i) {
    if (!r.u64(bits[i])) return kTruncated;
  }
  if (StateCodecError e = check_window(size, top, bits); e != StateCodecError::ok) return e;
  s.uplink_window = ReplayWindow(size);
  s.uplink_window.restore(top, bits);
  if (!r.u64(s.downlink_seq) || !r.u64(s.created_ms) || !r.u64(s.last_seen_ms) || !r.u32(s.serial))
    return kTruncated;
  return s.downlink_seq > kSeqSpace ? StateCodecError::bad_seq : StateCodecError::ok;
}

StateCodecError read_dev_id(ByteReader& r, const DevId* expected, DevId& out) noexcept {
  std::uint8_t length = 0;
  ByteView text;
  if (!r.u8(length)) return StateCodecError::truncated;
  if (length > kDevIdMaxSize) return StateCodecError::bad_dev_id;
  if (!r.bytes(length, text)) return StateCodecError::truncated;
  if (length != 0) {
    const std::string_view chars(reinterpret_cast<const char*>(text.data()), text.size());
    if (out.assign(chars) != Error::ok) return StateCodecError::bad_dev_id;
  }
  if (expected != nullptr && length != 0 && !(out == *expected))
    return StateCodecError::dev_id_mismatch;
  return StateCodecError::ok;
}

StateCodecError read_replay_cache(ByteReader& r, InitReplayCache& cache) noexcept {
  std::uint8_t next = 0;
  std::uint32_t mask = 0;
  if (!r.u8(next) || !r.u32(mask)) return StateCodecError::truncated;
  if (next >= kInitReplayCacheSize) return StateCodecError::bad_replay_cache;
  cache.next = next;
  for (std::size_t i = 0; i < cache.entries.size(); ++i) {
    if ((mask >> i & 1u) == 0) continue;
    auto& entry = cache.entries[i];
    if (!read_into(r, entry.dev_nonce) || !r.u64(entry.expires_s))
      return StateCodecError::truncated;
    entry.used = true;
  }
  return StateCodecError::ok;
}

StateCodecError read_pending(ByteReader& r, EdgeDeviceState& s) noexcept {
  InitFrame& init = s.pending.init;
  init.dev_id = s.dev_id;
  if (!r.u16(init.sessctr) || !r.u32(init.t) || !read_into(r, init.dev_nonce) ||
      !read_into(r, init.proof) || !read_into(r, s.pending.edge_nonce) ||
      !read_into(r, s.pending.ack_proof))
    return StateCodecError::truncated;
  if (StateCodecError e = read_session(r, s.pending.session); e != StateCodecError::ok) return e;
  return s.pending.session.sessctr == init.sessctr ? StateCodecError::ok
                                                   : StateCodecError::inconsistent_state;
}

StateCodecError read_state(ByteReader& r, const DevId* expected, EdgeDeviceState& s) noexcept {
  constexpr auto kTruncated = StateCodecError::truncated;
  std::uint8_t version = 0;
  if (!r.u8(version)) return kTruncated;
  if (version != kDeviceStateFormatVersion) return StateCodecError::unsupported_version;
  if (StateCodecError e = read_dev_id(r, expected, s.dev_id); e != StateCodecError::ok) return e;

  std::uint8_t flags = 0;
  std::uint8_t established = 0;
  TokenBucketState bucket;
  if (!r.u8(flags) || !r.u32(s.newest_init_t) || !r.u32(s.next_session_serial) ||
      !r.u8(established) || !r.u32(bucket.tokens) || !r.u64(bucket.last_refill_ms))
    return kTruncated;
  s.has_pending = (flags & kFlagPending) != 0;
  s.has_newest_init = (flags & kFlagNewestInit) != 0;
  bucket.initialised = (flags & kFlagBucket) != 0;
  s.compact_replies = (flags & kFlagCompactReplies) != 0;
  if ((flags & ~kKnownFlags) != 0 || (!s.has_newest_init && s.newest_init_t != 0) ||
      (!bucket.initialised && (bucket.tokens != 0 || bucket.last_refill_ms != 0)))
    return StateCodecError::bad_flags;
  if (established > kMaxEstablishedSessions) return StateCodecError::too_many_sessions;
  s.established_count = established;
  s.init_bucket.restore(bucket);

  if (StateCodecError e = read_replay_cache(r, s.seen_inits); e != StateCodecError::ok) return e;
  if (s.dev_id.size() == 0 && has_bound_content(s.has_pending, s.established_count,
                                                s.has_newest_init, used_mask(s.seen_inits)))
    return StateCodecError::inconsistent_state;
  if (s.has_pending) {
    if (StateCodecError e = read_pending(r, s); e != StateCodecError::ok) return e;
  }
  for (std::uint32_t i = 0; i < s.established_count; ++i) {
    if (StateCodecError e = read_session(r, s.established[i]); e != StateCodecError::ok) return e;
  }
  s.ratchet.active = (flags & kFlagRatchet) != 0;
  if (s.ratchet.active) {
    std::uint32_t pending_epoch = 0;
    if (!r.u32(s.ratchet.epoch) || !read_into(r, s.ratchet.secret) || !r.u32(pending_epoch))
      return kTruncated;
    if (s.has_pending) s.pending.ratchet_epoch = pending_epoch;
    if (!s.has_pending && pending_epoch != 0) return StateCodecError::inconsistent_state;
    if (StateCodecError e = check_ratchet(s); e != StateCodecError::ok) return e;
  }
  return r.at_end() ? StateCodecError::ok : StateCodecError::trailing_bytes;
}

}  // namespace

const char* state_codec_error_name(StateCodecError e) noexcept {
  switch (e) {
    case StateCodecError::ok:
      return "ok";
    case StateCodecError::truncated:
      return "truncated";
    case StateCodecError::trailing_bytes:
      return "trailing_bytes";
    case StateCodecError::unsupported_version:
      return "unsupported_version";
    case StateCodecError::bad_dev_id:
      return "bad_dev_id";
    case StateCodecError::dev_id_mismatch:
      return "dev_id_mismatch";
    case StateCodecError::bad_flags:
      return "bad_flags";
    case StateCodecError::too_many_sessions:
      return "too_many_sessions";
    case StateCodecError::bad_replay_cache:
      return "bad_replay_cache";
    case StateCodecError::bad_replay_window:
      return "bad_replay_window";
    case StateCodecError::bad_seq:
      return "bad_seq";
    case StateCodecError::inconsistent_state:
      return "inconsistent_state";
  }
  return "unknown";
}

StateCodecError check_device_state(const EdgeDeviceState& state) noexcept {
  return check_for_encode(state);
}

StateCodecError encode_device_state(const EdgeDeviceState& state, std::vector<std::uint8_t>& out) {
  secure_wipe(out);  // it may hold an earlier state's keys
  out.clear();
  if (StateCodecError e = check_for_encode(state); e != StateCodecError::ok) return e;
  out.reserve(encoded_size(state));
  ByteWriter w(out);
  write_state(w, state);
  return StateCodecError::ok;
}

StateCodecError decode_device_state(ByteView bytes, const DevId* expected_dev_id,
                                    EdgeDeviceState& out) noexcept {
  // Decoded into a scratch state so that a failure leaves `out` untouched; the scratch state's
  // keys are wiped by SecretBytes when it goes out of scope.
  EdgeDeviceState scratch;
  ByteReader reader(bytes);
  const StateCodecError e = read_state(reader, expected_dev_id, scratch);
  if (e == StateCodecError::ok) out = std::move(scratch);
  return e;
}

}  // namespace dsekp::edge
