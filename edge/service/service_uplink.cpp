// EdgeService: the uplink frames. DATA on {prefix}dsekp/data (PROTOCOL.md 6.3) commits the moved
// replay window and the sink row as one unit (a frame under an established session that the
// store can hand out takes the fast path, on_cached_data: uplink_session_cache.hpp); the PSK
// baseline on {prefix}psk/data commits only its row (it has no state, hence no replay protection:
// the paper's design).
#include <algorithm>
#include <string>
#include <vector>

#include "dsekp/key_schedule.hpp"
#include "dsekp/psk_baseline.hpp"
#include "edge/store/uplink_session_cache.hpp"
#include "service_internal.hpp"
#include "write_unit.hpp"

namespace dsekp::edge {
namespace {

using service_detail::fail;
using service_detail::fail_store;
using service_detail::reject;

// The nonce the frame opened with. JSON frames carry it (and the core checked it equals the
// derived one); compact frames do not, so it is derived from the session that accepted the
// frame: after open_data that is the established session with the frame's sessctr (a confirmed
// pending session has just moved there, replacing any older one with the same sessctr).
AeadNonce frame_nonce(const DataFrame& frame, const EdgeDeviceState& state) {
  if (frame.has_iv) return frame.iv;
  for (std::uint32_t i = 0; i < state.established_count; ++i) {
    const EdgeSession& s = state.established[i];
    if (s.sessctr == frame.sessctr) return make_nonce(s.keys.up.iv_base, frame.seq);
  }
  return AeadNonce{};  // unreachable after a successful open_data
}

// A DATA frame with an empty plaintext (the frame that confirms a session of a device with
// nothing to report, PROTOCOL.md 6.1 step 4) is accepted, confirms and moves the window, but is
// no reading: the sinks (CSV, telemetry table, republish) never see it.
bool is_reading(const AcceptedFrame& row) {
  return !row.plaintext.empty();
}

// Clears the decrypted bytes of one frame from the service's buffer, whatever way the handler
// leaves: the row has its own copy.
class PlaintextScope {
 public:
  explicit PlaintextScope(MutableByteView buffer) noexcept : buffer_(buffer) {}
  PlaintextScope(const PlaintextScope&) = delete;
  PlaintextScope& operator=(const PlaintextScope&) = delete;
  ~PlaintextScope() { secure_wipe(buffer_.first(used)); }
  std::size_t used = 0;

 private:
  MutableByteView buffer_;
};

// Forgets the device in the uplink cache unless the acceptance its cached window now holds was
// staged: a window that is ahead of the shared one would refuse a redelivery of a frame that
// was never recorded.
class CachedWindowGuard {
 public:
  CachedWindowGuard(UplinkSessionCache& cache, const DevId& dev_id) noexcept
      : cache_(cache), dev_id_(dev_id) {}
  CachedWindowGuard(const CachedWindowGuard&) = delete;
  CachedWindowGuard& operator=(const CachedWindowGuard&) = delete;
  ~CachedWindowGuard() {
    if (!staged) cache_.forget(dev_id_);
  }
  bool staged = false;

 private:
  UplinkSessionCache& cache_;
  const DevId& dev_id_;
};

}  // namespace

EdgeService::CachedPath EdgeService::on_cached_data(const DataFrame& frame, ByteView payload,
                                                    std::uint64_t now_ms, std::uint64_t recvts_us,
                                                    HandleResult& r) {
  UplinkSessionCache* cache = store_.uplink_cache();
  if (cache == nullptr) return CachedPath::miss;
  // The registry is asked on every frame (answered once per burst, credential_cache.hpp), as
  // on the full path: a rotated credential changes the generation, the cached sessions no
  // longer match it, and the full path drops the old state.
  std::uint64_t generation = 0;
  if (!credentials_.generation(frame.dev_id.str(), generation).ok()) return CachedPath::miss;
  EdgeSession* session = cache->find_session(frame.dev_id, frame.sessctr, generation);
  if (session == nullptr) return CachedPath::miss;

  PlaintextScope plaintext(plaintext_);
  std::size_t size = 0;
  const Error e = protocol_->open_established(frame, *session, now_ms, plaintext_, size);
  plaintext.used = std::min(size, plaintext_.size());
  // The cached window holds a subset of what the shared one has accepted: its refusals stand.
  if (e == Error::replay || e == Error::too_old) {
    reject(r, e);
    return CachedPath::handled;
  }
  // Not these keys: a pending session may share the sessctr (or the frame is forged, which the
  // full path reports with its reason).
  if (e != Error::ok) return CachedPath::not_opened;

  CachedWindowGuard guard(*cache, frame.dev_id);
  AcceptedFrame row = make_accepted_frame(
      frame, frame.has_iv ? frame.iv : make_nonce(session->keys.up.iv_base, frame.seq),
      ByteView(plaintext_.data(), plaintext.used), payload, recvts_us);
  WriteUnit unit(store_, &sink_);
  if (!unit.status().ok()) {
    fail_store(r, "begin", unit.status());
    return CachedPath::handled;
  }
  if (const StoreResult s = cache->stage_accept(frame.dev_id, *session, frame.seq); !s.ok()) {
    fail_store(r, "stage window", s);
    return CachedPath::handled;
  }
  guard.staged = true;  // from here an undo of the unit forgets the device (the store does)
  if (is_reading(row) && !unit.write(row)) {
    fail(r, EdgeReason::sink_failure, unit.write_refusal());
    return CachedPath::handled;
  }
  if (commit(unit, r)) r.frame = std::move(row);
  return CachedPath::handled;
}

void EdgeService::on_data(std::string_view topic_dev_id, ByteView payload, std::uint64_t now_ms,
                          std::uint64_t recvts_us, HandleResult& r) {
  DataFrame frame;
  if (const Error e = decoder_.decode_data(payload, Direction::uplink, frame); e != Error::ok)
    return reject(r, e);
  r.dev_id = frame.dev_id.str();
  if (service_detail::from_another_device(topic_dev_id, frame.dev_id, r)) return;
  const CachedPath cached = on_cached_data(frame, payload, now_ms, recvts_us, r);
  if (store_.uplink_cache() != nullptr)
    r.cache_lookup = cached == CachedPath::handled ? CacheLookup::hit : CacheLookup::miss;
  if (cached == CachedPath::handled) return;
  ReusedContext lease(*data_context_);
  DeviceContext& ctx = lease.get();
  if (!load_device(frame.dev_id, ctx, r)) return;
  if (ctx.stale) {
    // Frames under keys from old credentials are refused, and those keys deleted; the request
    // is under the new credentials, which a device that has them can act on.
    if (drop_stale(frame.dev_id, ctx, r)) {
      reject(r, Error::unknown_session);
      ctx.state = EdgeDeviceState{};  // dropped: the new credentials' secret is the current one
      if (const DevSecret* secret = current_secret(ctx))
        request_rekey(frame, payload, *secret, /*ratcheting=*/false, now_ms, r);
    }
    return;
  }
  // A miss on the Redis store: the load has just put the device's established sessions in the
  // cache, so a frame
  // under one of them is accepted by a window operation alone, without saving the whole state
  // (which would also move the generation other edges' full-path saves are conditioned on).
  if (cached == CachedPath::miss &&
      on_cached_data(frame, payload, now_ms, recvts_us, r) == CachedPath::handled)
    return;

  PlaintextScope plaintext(plaintext_);
  DataOutcome outcome;
  const Error e = protocol_->open_data(frame, ctx.state, now_ms, plaintext_, outcome);
  plaintext.used = std::min(outcome.plaintext_size, plaintext_.size());
  if (e != Error::ok) {
    reject(r, e);
    if (e == Error::unknown_session)
      if (const DevSecret* secret = current_secret(ctx))
        request_rekey(frame, payload, *secret, ctx.credentials.ratchet, now_ms, r);
    return;
  }

  AcceptedFrame row =
      make_accepted_frame(frame, frame_nonce(frame, ctx.state),
                          ByteView(plaintext_.data(), plaintext.used), payload, recvts_us);
  WriteUnit unit(store_, &sink_);
  if (!unit.status().ok()) return fail_store(r, "begin", unit.status());
  if (!save_state(frame.dev_id, ctx, /*record=*/false, now_ms, r)) return;
  // Not stale (checked above) and just saved: the next frames under its established sessions
  // may take the fast path. An undone unit takes the mark back with it.
  if (UplinkSessionCache* cache = store_.uplink_cache())
    cache->note_checked(frame.dev_id, ctx.credentials.generation);
  if (is_reading(row) && !unit.write(row))
    return fail(r, EdgeReason::sink_failure, unit.write_refusal());
  if (!commit(unit, r)) return;

  r.frame = std::move(row);
  r.session_confirmed = outcome.confirmed_session;
  r.session_evicted = outcome.evicted;
  r.ratcheted = outcome.ratcheted;
  r.evicted_sessctr = outcome.evicted_sessctr;
}

void EdgeService::request_rekey(const DataFrame& frame, ByteView payload,
                                const DevSecret& dev_secret, bool ratcheting, std::uint64_t now_ms,
                                HandleResult& r) {
  // The frame is unauthenticated (the edge has no keys for it): the request only names what the
  // frame claims, and the device acts on it only for its current session and a seq it recently
  // sent (6.1 step 7), so a forged frame can at worst make a device rekey once.
  if (!rekey_requests_.may_send(frame.dev_id.str(), now_ms)) return;
  RekeyFrame request;
  request.dev_id = frame.dev_id;
  request.sessctr = frame.sessctr;
  request.seq = frame.seq;
  // A ratcheting device takes a request under its own secret or the one before (PROTOCOL.md
  // 6.6, device rule 3) and may be ahead of a state restored from an older copy (or lost: then
  // `dev_secret` is the provisioned one): one request under every second secret of the INIT
  // look-ahead reaches it wherever its INIT can still be verified; the others it refuses
  // (bad_rekey_proof, or rate_limited after the one it took).
  const std::uint32_t requests =
      ratcheting ? std::min(protocol_->config().ratchet_lookahead / 2 + 1, kMaxRekeyRequests) : 1;
  const EdgeSalt& salt = protocol_->config().edge_salt;
  DevSecret secret = dev_secret.clone();
  const Encoding encoding = detect_encoding(payload);
  Error e = Error::ok;
  for (std::uint32_t i = 0; i < requests && e == Error::ok; ++i) {
    if (i > 0) {  // two steps past the last one: each request covers two of the device's secrets
      e = derive_next_secret(crypto_, secret, salt, frame.dev_id, secret);
      if (e == Error::ok) e = derive_next_secret(crypto_, secret, salt, frame.dev_id, secret);
    }
    if (e == Error::ok) e = rekey_request_proof(crypto_, secret, salt, request, request.proof);
    crypto_.forget_keys();
    std::vector<std::uint8_t> wire(kMaxFrameSize);
    std::size_t size = 0;
    if (e == Error::ok) e = encode(request, encoding, wire, size);
    if (e != Error::ok) break;
    wire.resize(size);
    r.publishes.push_back(Publish{topics_.rekey(frame.dev_id.str()), std::move(wire), 1});
  }
  if (e != Error::ok) {
    r.detail = std::string("cannot make a REKEY request: ") + error_name(e);
    if (r.publishes.empty()) return;
  }
  r.rekey_requested = true;
  rekey_requests_.sent(frame.dev_id.str(), now_ms);
}

void EdgeService::on_psk(ByteView payload, std::uint64_t, std::uint64_t recvts_us,
                         HandleResult& r) {
  PskFrame frame;
  if (const Error e = decoder_.decode_psk(payload, frame); e != Error::ok) return reject(r, e);
  r.dev_id = frame.dev_id.str();
  DeviceCredentials credentials;
  if (const RegistryStatus s = credentials_.find(frame.dev_id.str(), credentials); !s.ok()) {
    if (s.code() == RegistryErrc::not_found) return reject(r, Error::unknown_device);
    return fail(r, EdgeReason::registry_failure, s.message());
  }

  PlaintextScope plaintext(plaintext_);
  std::size_t size = 0;
  const Error e = psk_open(crypto_, credentials.psk_key, frame, plaintext_, size);
  plaintext.used = std::min(size, plaintext_.size());
  if (e != Error::ok) return reject(r, e);

  AcceptedFrame row =
      make_accepted_frame(frame, ByteView(plaintext_.data(), plaintext.used), payload, recvts_us);
  WriteUnit unit(store_, &sink_);
  if (!unit.status().ok()) return fail_store(r, "begin", unit.status());
  if (!unit.write(row)) return fail(r, EdgeReason::sink_failure, unit.write_refusal());
  if (!commit(unit, r)) return;
  r.frame = std::move(row);
}

}  // namespace dsekp::edge
