// The edge-side protocol: INIT verification and ACK, key confirmation, data and downlink
// (rules and their order in edge_session.hpp).
#include "dsekp/edge_session.hpp"

#include "dsekp/data_frame.hpp"

namespace dsekp {
namespace {

constexpr std::uint64_t kSeqSpace = std::uint64_t{1} << 32;
static_assert(sizeof(EdgeSession) <= 256, "per-session edge state target of protocol-v1");

bool same_init(const InitFrame& a, const InitFrame& b) noexcept {
  return a.dev_id == b.dev_id && a.sessctr == b.sessctr && a.t == b.t &&
         a.dev_nonce.equals(b.dev_nonce) && a.proof.equals(b.proof);
}

AckFrame make_ack(const InitFrame& init, const EdgeNonce& edge_nonce, const Proof& proof) noexcept {
  AckFrame ack;
  ack.dev_id = init.dev_id;
  ack.sessctr = init.sessctr;
  ack.edge_nonce = edge_nonce;
  ack.status = kAckStatusOk;
  ack.proof = proof;
  return ack;
}

std::uint64_t abs_diff(std::uint64_t a, std::uint64_t b) noexcept {
  return a > b ? a - b : b - a;
}

// Forgets entries whose INIT can no longer pass the timestamp check.
void expire_seen(InitReplayCache& cache, std::uint64_t now_s, std::uint32_t max_skew_s) noexcept {
  if (max_skew_s == 0) return;
  for (auto& entry : cache.entries) {
    if (entry.used && entry.expires_s < now_s) entry = InitReplayCache::Entry{};
  }
}

bool seen_before(const InitReplayCache& cache, const DevNonce& nonce) noexcept {
  for (const auto& entry : cache.entries) {
    if (entry.used && entry.dev_nonce.equals(nonce)) return true;
  }
  return false;
}

// Finds a slot for a new entry. With a clock, a full cache of unexpired entries is a refusal
// (forgetting one would reopen its replay window); without one the oldest entry is overwritten.
InitReplayCache::Entry* free_seen_slot(InitReplayCache& cache, std::uint32_t max_skew_s) noexcept {
  for (auto& entry : cache.entries) {
    if (!entry.used) return &entry;
  }
  if (max_skew_s != 0) return nullptr;
  InitReplayCache::Entry* slot = &cache.entries[cache.next];
  cache.next = static_cast<std::uint32_t>((cache.next + 1) % cache.entries.size());
  return slot;
}

EdgeSession* oldest_established(EdgeDeviceState& state) noexcept {
  EdgeSession* oldest = &state.established[0];
  for (std::uint32_t i = 1; i < state.established_count; ++i) {
    if (state.established[i].created_ms < oldest->created_ms) oldest = &state.established[i];
  }
  return oldest;
}

}  // namespace

EdgeProtocol::EdgeProtocol(CryptoBackend& crypto, const EdgeConfig& config) noexcept
    : crypto_(crypto), config_(config) {
  if (config_.max_established == 0) config_.max_established = 1;
  if (config_.max_established > kMaxEstablishedSessions)
    config_.max_established = kMaxEstablishedSessions;
}

Error EdgeProtocol::handle_init(const InitFrame& init, const DevSecret& dev_secret,
                                EdgeDeviceState& state, std::uint64_t now_ms, Rng& rng,
                                InitOutcome& out) noexcept {
  const std::uint64_t now_s = now_ms / 1000;
  if (config_.max_skew_s != 0 && abs_diff(init.t, now_s) > config_.max_skew_s)
    return Error::stale_timestamp;

  // Authenticate before any state is touched.
  const InitParams params{&init.dev_id, init.sessctr, init.t, init.dev_nonce};
  HandshakeKeys keys;
  if (Error e = derive_handshake_keys(crypto_, dev_secret, config_.edge_salt, params, keys);
      e != Error::ok)
    return e;
  Proof expected;
  if (Error e = compute_init_proof(crypto_, keys.k_init, params, expected); e != Error::ok)
    return e;
  if (!expected.equals(init.proof)) return Error::bad_proof;

  // A retransmission of the INIT we already answered: the ACK was lost, send the same one.
  if (state.has_pending && same_init(state.pending.init, init)) {
    out.ack = make_ack(init, state.pending.edge_nonce, state.pending.ack_proof);
    out.retransmission = true;
    return Error::ok;
  }

  expire_seen(state.seen_inits, now_s, config_.max_skew_s);
  if (seen_before(state.seen_inits, init.dev_nonce)) return Error::duplicate_init;
  if (!state.init_bucket.try_take(config_.init_rate, now_ms)) return Error::rate_limited;
  if (config_.admission_hook != nullptr && !config_.admission_hook->admit_init(init.dev_id, now_ms))
    return Error::rate_limited;
  InitReplayCache::Entry* slot = free_seen_slot(state.seen_inits, config_.max_skew_s);
  if (slot == nullptr) return Error::rate_limited;

  PendingSession pending;
  if (Error e = rng.fill(pending.edge_nonce.mutable_view()); e != Error::ok) return e;
  if (Error e = compute_ack_proof(crypto_, keys.k_ack, init.proof, pending.edge_nonce, kAckStatusOk,
                                  pending.ack_proof);
      e != Error::ok)
    return e;
  if (Error e = derive_traffic_keys(crypto_, keys.session_secret, pending.edge_nonce,
                                    pending.session.keys);
      e != Error::ok)
    return e;
  pending.init = init;
  pending.session.sessctr = init.sessctr;
  pending.session.uplink_window = ReplayWindow(config_.replay_window);
  pending.session.created_ms = now_ms;
  pending.session.last_seen_ms = now_ms;

  *slot = InitReplayCache::Entry{init.dev_nonce,
                                 static_cast<std::uint64_t>(init.t) + config_.max_skew_s, true};
  state.pending = static_cast<PendingSession&&>(pending);
  state.has_pending = true;
  out.ack = make_ack(init, state.pending.edge_nonce, state.pending.ack_proof);
  out.retransmission = false;
  return Error::ok;
}

Error EdgeProtocol::open_data(const DataFrame& frame, EdgeDeviceState& state, std::uint64_t now_ms,
                              MutableByteView plaintext, DataOutcome& out) noexcept {
  out = DataOutcome{};
  if (frame.direction != Direction::uplink) return Error::invalid_argument;

  EdgeSession* established = nullptr;
  for (std::uint32_t i = 0; i < state.established_count; ++i) {
    if (state.established[i].sessctr == frame.sessctr) established = &state.established[i];
  }
  const bool pending_matches = state.has_pending && state.pending.session.sessctr == frame.sessctr;
  if (established == nullptr && !pending_matches) return Error::unknown_session;

  // Established session first; the pending one only if none matches or it fails to verify (a
  // rebooted device can draw the sessctr of one of its older sessions).
  EdgeSession* session = nullptr;
  Error e = Error::unknown_session;
  if (established != nullptr) {
    e = open_data_frame(crypto_, established->keys.up, frame, plaintext, out.plaintext_size);
    if (e == Error::ok) session = established;
  }
  bool confirms_pending = false;
  if (session == nullptr && pending_matches) {
    e = open_data_frame(crypto_, state.pending.session.keys.up, frame, plaintext,
                        out.plaintext_size);
    if (e == Error::ok) {
      session = &state.pending.session;
      confirms_pending = true;
    }
  }
  if (session == nullptr) return e;

  // Only an authenticated frame may move the window.
  if (Error w = session->uplink_window.accept(frame.seq); w != Error::ok) {
    secure_wipe(plaintext.first(out.plaintext_size));
    out.plaintext_size = 0;
    return w;
  }
  session->last_seen_ms = now_ms;

  if (confirms_pending) {
    // Key confirmation: the device holds the keys, so the session becomes established. An
    // established session with the same sessctr is superseded; otherwise the oldest is evicted
    // once the device has max_established sessions.
    EdgeSession* slot = established;
    bool evicts = established != nullptr;
    if (slot == nullptr && state.established_count < config_.max_established) {
      slot = &state.established[state.established_count++];
    } else if (slot == nullptr) {
      slot = oldest_established(state);
      evicts = true;
    }
    out.confirmed_session = true;
    out.evicted = evicts;
    out.evicted_sessctr = evicts ? slot->sessctr : 0;
    *slot = static_cast<EdgeSession&&>(state.pending.session);
    state.pending = PendingSession{};
    state.has_pending = false;
  }
  return Error::ok;
}

Error EdgeProtocol::seal_downlink(const DevId& dev_id, EdgeDeviceState& state, ByteView plaintext,
                                  std::uint64_t sendts_ms, DataFrame& out) noexcept {
  EdgeSession* newest = nullptr;
  for (std::uint32_t i = 0; i < state.established_count; ++i) {
    if (newest == nullptr || state.established[i].created_ms >= newest->created_ms)
      newest = &state.established[i];
  }
  if (newest == nullptr) return Error::no_session;
  if (newest->downlink_seq >= kSeqSpace) return Error::session_exhausted;
  const auto seq = static_cast<std::uint32_t>(newest->downlink_seq++);
  return seal_data_frame(crypto_, newest->keys.down, Direction::downlink, dev_id, newest->sessctr,
                         seq, sendts_ms, plaintext, out);
}

}  // namespace dsekp
