// The edge-side protocol: INIT verification and ACK, key confirmation, data and downlink
// (rules and their order in edge_session.hpp).
#include "dsekp/edge_session.hpp"

#include <utility>

#include "data_frame.hpp"

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

// A state may come from storage: clamp every count and index before it is used as one.
void clamp_loaded_state(EdgeDeviceState& state) noexcept {
  if (state.established_count > kMaxEstablishedSessions)
    state.established_count = kMaxEstablishedSessions;
  state.seen_inits.next %= static_cast<std::uint32_t>(state.seen_inits.entries.size());
}

// A state bound to another device must not be touched (the caller looked up the wrong row).
bool bound_elsewhere(const EdgeDeviceState& state, const DevId& dev_id) noexcept {
  return state.dev_id.size() != 0 && !(state.dev_id == dev_id);
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

// Index of the slot a new entry would take, or -1. With a clock, a full cache of unexpired
// entries is a refusal (forgetting one would reopen its replay window); without one the oldest
// entry is overwritten. Nothing changes until the entry is committed.
int free_seen_slot(const InitReplayCache& cache, std::uint32_t max_skew_s) noexcept {
  for (std::size_t i = 0; i < cache.entries.size(); ++i) {
    if (!cache.entries[i].used) return static_cast<int>(i);
  }
  return max_skew_s != 0 ? -1 : static_cast<int>(cache.next);
}

void commit_seen(InitReplayCache& cache, int slot, const InitFrame& init,
                 std::uint32_t max_skew_s) noexcept {
  const auto index = static_cast<std::size_t>(slot);
  if (cache.entries[index].used) {  // FIFO overwrite (max_skew 0): move past it
    cache.next = static_cast<std::uint32_t>((index + 1) % cache.entries.size());
  }
  cache.entries[index] =
      InitReplayCache::Entry{init.dev_nonce, std::uint64_t{init.t} + max_skew_s, true};
}

// Is an INIT with time/counter `t` not newer than the newest one accepted from this device? `t`
// must strictly grow (devices never reuse one, PROTOCOL.md 6.1 step 1): an equal `t` would let
// an INIT held back from the same second displace the session the device just established. With
// a clock, a newest `t` beyond the edge's own freshness window is ignored: then the edge's clock
// stepped back, and trusting the stored value would lock the device out for as long as the step.
bool superseded(std::uint32_t t, std::uint32_t newest_t, std::uint64_t now_s,
                std::uint32_t max_skew_s) noexcept {
  if (max_skew_s != 0 && std::uint64_t{newest_t} > now_s + max_skew_s) return false;
  return t <= newest_t;
}

// Derives the handshake keys under `secret` and checks the INIT's proof with them.
Error check_init_proof(CryptoBackend& crypto, const DevSecret& secret, const EdgeSalt& edge_salt,
                       const InitParams& params, const Proof& proof, HandshakeKeys& keys) noexcept {
  Proof expected;
  Error e = derive_handshake_keys(crypto, secret, edge_salt, params, keys);
  if (e == Error::ok) e = compute_init_proof(crypto, keys.k_init, params, expected);
  if (e == Error::ok && !expected.equals(proof)) e = Error::bad_proof;
  return e;
}

EdgeSession* find_by_serial(EdgeDeviceState& state, bool newest) noexcept {
  EdgeSession* found = nullptr;
  for (std::uint32_t i = 0; i < state.established_count; ++i) {
    EdgeSession& s = state.established[i];
    if (found == nullptr || (newest ? s.serial > found->serial : s.serial < found->serial))
      found = &s;
  }
  return found;
}

}  // namespace

EdgeDeviceState::EdgeDeviceState(EdgeDeviceState&& other) noexcept {
  *this = std::move(other);
}

EdgeDeviceState& EdgeDeviceState::operator=(EdgeDeviceState&& other) noexcept {
  if (this == &other) return *this;
  dev_id = other.dev_id;
  has_pending = other.has_pending;
  pending = std::move(other.pending);
  for (std::size_t i = 0; i < established.size(); ++i)
    established[i] = std::move(other.established[i]);
  established_count = other.established_count;
  has_newest_init = other.has_newest_init;
  newest_init_t = other.newest_init_t;
  next_session_serial = other.next_session_serial;
  seen_inits = other.seen_inits;
  init_bucket = other.init_bucket;
  compact_replies = other.compact_replies;
  ratchet.active = other.ratchet.active;
  ratchet.epoch = other.ratchet.epoch;
  ratchet.secret = std::move(other.ratchet.secret);
  // The source's keys were wiped by the moves; make it empty rather than keyless-but-"live".
  other.has_pending = false;
  other.established_count = 0;
  other.ratchet.active = false;
  other.ratchet.epoch = 0;
  return *this;
}

EdgeProtocol::EdgeProtocol(CryptoBackend& crypto, const EdgeConfig& config) noexcept
    : crypto_(crypto), config_(config) {
  if (config_.max_established == 0) config_.max_established = 1;
  if (config_.max_established > kMaxEstablishedSessions)
    config_.max_established = kMaxEstablishedSessions;
  if (config_.ratchet_lookahead == 0) config_.ratchet_lookahead = 1;
  if (config_.ratchet_lookahead > kMaxRatchetLookahead)
    config_.ratchet_lookahead = kMaxRatchetLookahead;
}

bool enable_ratchet(EdgeDeviceState& state, const DevId& dev_id,
                    const DevSecret& provisioned) noexcept {
  if (bound_elsewhere(state, dev_id)) return false;
  if (state.ratchet.active) return true;
  state.dev_id = dev_id;
  state.ratchet.active = true;
  state.ratchet.epoch = 0;
  state.ratchet.secret = provisioned.clone();
  return true;
}

Error EdgeProtocol::handle_init(const InitFrame& init, const DevSecret& dev_secret,
                                EdgeDeviceState& state, std::uint64_t now_ms, Rng& rng,
                                InitOutcome& out) noexcept {
  clamp_loaded_state(state);
  const std::uint64_t now_s = now_ms / 1000;
  if (config_.max_skew_s != 0 && abs_diff(init.t, now_s) > config_.max_skew_s)
    return Error::stale_timestamp;
  if (bound_elsewhere(state, init.dev_id)) return Error::dev_id_mismatch;

  // Authenticate before any state is touched. In ratchet mode under the state's secret, then
  // under each next one up to the look-ahead: the device steps at the ACK and the edge only
  // when it learns so, so the device may be ahead (by one, unless the state went back in time).
  const InitParams params{&init.dev_id, init.sessctr, init.t, init.dev_nonce};
  HandshakeKeys keys;
  Error e = Error::ok;
  DevSecret ratchet_secret;         // ratchet mode: the secret the proof verified under
  std::uint32_t ratchet_steps = 0;  // ...and how far past the state's it is
  if (!state.ratchet.active) {
    e = check_init_proof(crypto_, dev_secret, config_.edge_salt, params, init.proof, keys);
  } else {
    ratchet_secret = state.ratchet.secret.clone();
    e = check_init_proof(crypto_, ratchet_secret, config_.edge_salt, params, init.proof, keys);
    while (e == Error::bad_proof && ratchet_steps < config_.ratchet_lookahead &&
           state.ratchet.epoch + ratchet_steps < 0xFFFFFFFFu) {
      e = derive_next_secret(crypto_, ratchet_secret, config_.edge_salt, init.dev_id,
                             ratchet_secret);
      if (e != Error::ok) break;
      ++ratchet_steps;
      e = check_init_proof(crypto_, ratchet_secret, config_.edge_salt, params, init.proof, keys);
    }
  }
  if (e != Error::ok) {
    crypto_.forget_keys();
    return e;
  }

  // A retransmission of the INIT we already answered: the ACK was lost, send the same one.
  if (state.has_pending && same_init(state.pending.init, init)) {
    crypto_.forget_keys();
    out.ack = make_ack(init, state.pending.edge_nonce, state.pending.ack_proof);
    out.retransmission = true;
    return Error::ok;
  }

  // Replays (and INITs an attacker held back) are refused here, before they can use up the
  // device's INIT budget or displace its pending session.
  if (state.has_newest_init && superseded(init.t, state.newest_init_t, now_s, config_.max_skew_s))
    e = Error::superseded_init;
  expire_seen(state.seen_inits, now_s, config_.max_skew_s);
  if (e == Error::ok && seen_before(state.seen_inits, init.dev_nonce)) e = Error::duplicate_init;
  const int slot = free_seen_slot(state.seen_inits, config_.max_skew_s);
  if (e == Error::ok && slot < 0) e = Error::rate_limited;
  if (e == Error::ok && config_.admission_hook != nullptr &&
      !config_.admission_hook->admit_init(init.dev_id, now_ms))
    e = Error::rate_limited;
  if (e == Error::ok && !state.init_bucket.try_take(config_.init_rate, now_ms))
    e = Error::rate_limited;

  PendingSession pending;
  if (e == Error::ok) e = rng.fill(pending.edge_nonce.mutable_view());
  if (e == Error::ok)
    e = compute_ack_proof(crypto_, keys.k_ack, init.proof, pending.edge_nonce, kAckStatusOk,
                          pending.ack_proof);
  if (e == Error::ok)
    e = derive_traffic_keys(crypto_, keys.session_secret, pending.edge_nonce, pending.session.keys);
  crypto_.forget_keys();
  if (e != Error::ok) return e;

  pending.init = init;
  pending.session.sessctr = init.sessctr;
  pending.session.uplink_window = ReplayWindow(config_.replay_window);
  pending.session.created_ms = now_ms;
  pending.session.last_seen_ms = now_ms;
  pending.session.serial = state.next_session_serial++;
  if (ratchet_steps > 0) {
    // The device holds this later secret and never goes back: the earlier ones are of no use.
    state.ratchet.secret = static_cast<DevSecret&&>(ratchet_secret);
    state.ratchet.epoch += ratchet_steps;
  }
  pending.ratchet_epoch = state.ratchet.epoch;

  commit_seen(state.seen_inits, slot, init, config_.max_skew_s);
  state.dev_id = init.dev_id;
  state.has_newest_init = true;
  state.newest_init_t = init.t;
  state.pending = static_cast<PendingSession&&>(pending);
  state.has_pending = true;
  out.ack = make_ack(init, state.pending.edge_nonce, state.pending.ack_proof);
  out.retransmission = false;
  out.ratchet_steps = ratchet_steps;
  return Error::ok;
}

Error EdgeProtocol::open_data(const DataFrame& frame, EdgeDeviceState& state, std::uint64_t now_ms,
                              MutableByteView plaintext, DataOutcome& out) noexcept {
  out = DataOutcome{};
  clamp_loaded_state(state);
  if (frame.direction != Direction::uplink) return Error::invalid_argument;
  if (bound_elsewhere(state, frame.dev_id)) return Error::dev_id_mismatch;

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
    const Error first = e;
    e = open_data_frame(crypto_, state.pending.session.keys.up, frame, plaintext,
                        out.plaintext_size);
    if (e == Error::ok) {
      session = &state.pending.session;
      confirms_pending = true;
    } else if (first == Error::auth_failed) {
      // The frame's iv was right for one candidate: it failed authentication there, whatever
      // the other made of it (PROTOCOL.md 6.3 step 2), so the name does not depend on the order.
      e = Error::auth_failed;
    }
  }
  if (session == nullptr) return e;

  // Ratchet mode: the device took the ACK of a session only after it had stored the next
  // secret (PROTOCOL.md 6.6), so a frame under that session is the proof that the edge can drop
  // the secret the session's INIT verified under. Derived before anything changes.
  DevSecret next_secret;
  const bool steps = confirms_pending && state.ratchet.active &&
                     state.pending.ratchet_epoch == state.ratchet.epoch &&
                     state.ratchet.epoch < 0xFFFFFFFFu;
  if (steps) {
    if (Error r = derive_next_secret(crypto_, state.ratchet.secret, config_.edge_salt, frame.dev_id,
                                     next_secret);
        r != Error::ok) {
      secure_wipe(plaintext.first(out.plaintext_size));
      out.plaintext_size = 0;
      return r;
    }
  }

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
      slot = find_by_serial(state, /*newest=*/false);
      evicts = true;
    }
    out.confirmed_session = true;
    out.evicted = evicts;
    out.evicted_sessctr = evicts ? slot->sessctr : 0;
    *slot = static_cast<EdgeSession&&>(state.pending.session);
    state.pending = PendingSession{};
    state.has_pending = false;
    if (steps) {
      state.ratchet.secret = static_cast<DevSecret&&>(next_secret);
      ++state.ratchet.epoch;
      out.ratcheted = true;
    }
  }
  return Error::ok;
}

Error EdgeProtocol::open_established(const DataFrame& frame, EdgeSession& session,
                                     std::uint64_t now_ms, MutableByteView plaintext,
                                     std::size_t& plaintext_size) noexcept {
  plaintext_size = 0;
  if (frame.direction != Direction::uplink || frame.sessctr != session.sessctr)
    return Error::invalid_argument;
  if (Error e = open_data_frame(crypto_, session.keys.up, frame, plaintext, plaintext_size);
      e != Error::ok)
    return e;
  // Only an authenticated frame may move the window (as in open_data).
  if (Error w = session.uplink_window.accept(frame.seq); w != Error::ok) {
    secure_wipe(plaintext.first(plaintext_size));
    plaintext_size = 0;
    return w;
  }
  session.last_seen_ms = now_ms;
  return Error::ok;
}

EdgeSession* downlink_session(EdgeDeviceState& state) noexcept {
  clamp_loaded_state(state);
  return find_by_serial(state, /*newest=*/true);
}

Error EdgeProtocol::seal_downlink(EdgeDeviceState& state, ByteView plaintext,
                                  std::uint64_t sendts_ms, DataFrame& out) noexcept {
  EdgeSession* newest = downlink_session(state);
  if (newest == nullptr) return Error::no_session;
  if (newest->downlink_seq >= kSeqSpace) return Error::session_exhausted;
  const auto seq = static_cast<std::uint32_t>(newest->downlink_seq++);
  return seal_data_frame(crypto_, newest->keys.down,
                         {Direction::downlink, state.dev_id, newest->sessctr, seq, sendts_ms},
                         plaintext, out);
}

}  // namespace dsekp
