// The device-side handshake state machine and data path (see device_session.hpp).
#include "dsekp/device_session.hpp"

#include <array>

#include "data_frame.hpp"

namespace dsekp {
namespace {
constexpr std::uint64_t kSeqSpace = std::uint64_t{1} << 32;
constexpr std::uint64_t kMaxSendTs = (std::uint64_t{1} << 53) - 1;  // JSON-safe, as the codecs

Error random_u16(Rng& rng, std::uint16_t& out) noexcept {
  std::array<std::uint8_t, 2> b{};
  Error e = rng.fill(MutableByteView(b));
  out = load_be16(b.data());
  return e;
}
}  // namespace

DeviceSession::DeviceSession(CryptoBackend& crypto, const DeviceCredentials& credentials,
                             const DeviceConfig& config) noexcept
    : crypto_(crypto),
      credentials_{credentials.dev_id, credentials.dev_secret.clone(), credentials.edge_salt,
                   credentials.epoch},
      config_(config),
      downlink_window_(config.downlink_window) {}

void DeviceSession::restore_last_init_t(std::uint32_t t) noexcept {
  if (has_last_t_ && t <= last_t_) return;
  has_last_t_ = true;
  last_t_ = t;
}

Error DeviceSession::start_handshake(std::uint32_t now_unix_s, Rng& rng, InitFrame& out) noexcept {
  pending_ = false;
  handshake_keys_ = HandshakeKeys{};  // wipes anything left from an earlier attempt
  InitFrame init;
  init.dev_id = credentials_.dev_id;
  // The edge refuses an INIT whose `t` is not greater than that of the newest it accepted from
  // this device (PROTOCOL.md 6.2 step 5), so `t` always grows here: a second INIT within one
  // clock second takes the next second.
  std::uint32_t t = now_unix_s;
  if (has_last_t_ && t <= last_t_) {
    if (last_t_ == 0xFFFFFFFFu) return Error::invalid_argument;
    t = last_t_ + 1;
  }
  init.t = t;
  // A new session must not reuse the live session's sessctr: the edge identifies sessions by
  // (dev_id, sessctr). A few redraws make a repeat practically impossible; the fallback is exact.
  std::uint16_t sessctr = 0;
  for (int attempt = 0; attempt < 4; ++attempt) {
    if (Error e = random_u16(rng, sessctr); e != Error::ok) return e;
    if (!established_ || sessctr != sessctr_) break;
  }
  if (established_ && sessctr == sessctr_) sessctr = static_cast<std::uint16_t>(sessctr + 1);
  init.sessctr = sessctr;
  if (Error e = rng.fill(init.dev_nonce.mutable_view()); e != Error::ok) return e;

  const InitParams params{&init.dev_id, init.sessctr, init.t, init.dev_nonce};
  Error e = derive_handshake_keys(crypto_, credentials_.dev_secret, credentials_.edge_salt, params,
                                  handshake_keys_);
  if (e == Error::ok) e = compute_init_proof(crypto_, handshake_keys_.k_init, params, init.proof);
  // K_init is needed only for the proof; SS and K_ack wait for the ACK (and so does the backend's
  // forget_keys(): what it holds now is no more than handshake_keys_ holds until then).
  handshake_keys_.k_init.wipe();
  if (e != Error::ok) {
    handshake_keys_ = HandshakeKeys{};
    return e;
  }

  init_ = init;
  pending_ = true;
  rekey_requested_ = false;
  sent_ = false;
  backoff_ms_ = 0;
  next_send_ms_ = 0;  // due at once
  has_last_t_ = true;
  last_t_ = init.t;
  out = init;
  return Error::ok;
}

bool DeviceSession::retransmit_due(std::uint64_t now_ms) const noexcept {
  return pending_ && now_ms >= next_send_ms_;
}

bool DeviceSession::handshake_expired(std::uint64_t now_ms) const noexcept {
  return pending_ && sent_ && now_ms >= first_sent_ms_ &&
         now_ms - first_sent_ms_ >= config_.init_max_age_ms;
}

Error DeviceSession::note_init_sent(std::uint64_t now_ms, Rng& rng) noexcept {
  if (!pending_) return Error::no_pending_handshake;
  if (!sent_) {
    sent_ = true;
    first_sent_ms_ = now_ms;
  }
  const std::uint32_t initial =
      config_.retransmit_initial_ms == 0 ? 1 : config_.retransmit_initial_ms;
  const std::uint32_t ceiling =
      config_.retransmit_max_ms < initial ? initial : config_.retransmit_max_ms;
  backoff_ms_ =
      backoff_ms_ == 0 ? initial : (backoff_ms_ > ceiling / 2 ? ceiling : backoff_ms_ * 2);
  // Jitter in [backoff/2, backoff] keeps a fleet that rebooted together from retrying in step.
  std::array<std::uint8_t, 4> r{};
  if (Error e = rng.fill(MutableByteView(r)); e != Error::ok) return e;
  const std::uint32_t half = backoff_ms_ / 2;
  next_send_ms_ = now_ms + half + load_be32(r.data()) % (backoff_ms_ - half + 1);
  return Error::ok;
}

Error DeviceSession::handle_ack(const AckFrame& ack) noexcept {
  if (!pending_) return Error::no_pending_handshake;
  if (!(ack.dev_id == init_.dev_id) || ack.sessctr != init_.sessctr) return Error::ack_mismatch;

  // Authenticate the edge before anything else: only an edge that knows DEV_SECRET can compute it.
  Proof expected;
  Error e = compute_ack_proof(crypto_, handshake_keys_.k_ack, init_.proof, ack.edge_nonce,
                              ack.status, expected);
  if (e == Error::ok && !expected.equals(ack.proof)) e = Error::bad_ack_proof;
  if (e == Error::ok && ack.status != kAckStatusOk) e = Error::ack_rejected;
  TrafficKeys fresh;
  if (e == Error::ok)
    e = derive_traffic_keys(crypto_, handshake_keys_.session_secret, ack.edge_nonce, fresh);
  if (e == Error::ok && config_.ratchet != nullptr)
    e = config_.ratchet->step(crypto_, credentials_);
  crypto_.forget_keys();
  if (e != Error::ok) return e;  // still pending: a genuine ACK may yet arrive

  traffic_ = static_cast<TrafficKeys&&>(fresh);  // the old session's keys are wiped by the move
  sessctr_ = init_.sessctr;
  next_seq_ = config_.first_seq;
  downlink_window_ = ReplayWindow(config_.downlink_window);
  established_ = true;
  has_session_start_ = sent_;
  session_start_ms_ = first_sent_ms_;
  confirmation_pending_ = true;
  pending_ = false;
  handshake_keys_ = HandshakeKeys{};  // wipes SS and K_ack
  return Error::ok;
}

bool DeviceSession::rekey_due() const noexcept {
  return established_ && (rekey_requested_ || next_seq_ >= config_.rekey_at_seq);
}

bool DeviceSession::rekey_due(std::uint64_t now_ms) const noexcept {
  if (rekey_due()) return true;
  return established_ && has_session_start_ && config_.rekey_after_ms != 0 &&
         now_ms >= session_start_ms_ && now_ms - session_start_ms_ >= config_.rekey_after_ms;
}

Error DeviceSession::handle_rekey(const RekeyFrame& request, std::uint64_t now_ms) noexcept {
  if (!established_) return Error::no_session;
  // A handshake already under way is the answer to any request.
  if (pending_ || !(request.dev_id == credentials_.dev_id) || request.sessctr != sessctr_)
    return Error::rekey_mismatch;
  // Only a seq this session has sent, and a recent one: the edge names the frame it could not
  // place, so a request is good only while that frame is recent.
  if (request.seq < config_.first_seq || request.seq >= next_seq_ ||
      next_seq_ - request.seq > kRekeyRecentFrames)
    return Error::stale_rekey;
  if (has_rekey_request_ms_ && now_ms >= rekey_request_ms_ &&
      now_ms - rekey_request_ms_ < config_.rekey_request_interval_ms)
    return Error::rate_limited;

  if (Error e = check_rekey_proof(request); e != Error::ok) return e;
  rekey_requested_ = true;
  has_rekey_request_ms_ = true;
  rekey_request_ms_ = now_ms;
  return Error::ok;
}

Error DeviceSession::check_rekey_proof(const RekeyFrame& request) noexcept {
  Proof expected;
  Error e = rekey_request_proof(crypto_, credentials_.dev_secret, credentials_.edge_salt, request,
                                expected);
  bool authentic = e == Error::ok && expected.equals(request.proof);
  if (e == Error::ok && !authentic && config_.ratchet != nullptr)
    authentic = config_.ratchet->is_previous_secrets_request(crypto_, request);
  crypto_.forget_keys();
  if (e != Error::ok) return e;
  return authentic ? Error::ok : Error::bad_rekey_proof;
}

Error DeviceSession::seal(ByteView plaintext, std::uint64_t sendts_ms, MutableByteView ciphertext,
                          DataFrameView& out) noexcept {
  out.ciphertext = ByteView();
  if (!established_) return Error::no_session;
  if (next_seq_ >= kSeqSpace) return Error::session_exhausted;
  if (plaintext.size() > kMaxPayloadSize) return Error::payload_too_large;
  if (ciphertext.size() < plaintext.size()) return Error::buffer_too_small;
  if (sendts_ms > kMaxSendTs) return Error::invalid_argument;
  // From here the seq is consumed, so even a failed seal can never lead to nonce reuse.
  const auto seq = static_cast<std::uint32_t>(next_seq_++);
  const Error e = seal_data_frame(
      crypto_, traffic_.up, {Direction::uplink, credentials_.dev_id, sessctr_, seq, sendts_ms},
      plaintext, ciphertext, out);
  if (e == Error::ok) confirmation_pending_ = false;
  return e;
}

Error DeviceSession::seal(ByteView plaintext, std::uint64_t sendts_ms, DataFrame& out) noexcept {
  return fill_data_frame(out, [&](MutableByteView storage, DataFrameView& view) {
    return seal(plaintext, sendts_ms, storage, view);
  });
}

template <typename Frame>
Error DeviceSession::open_downlink_frame(const Frame& frame, MutableByteView plaintext,
                                         std::size_t& plaintext_size) noexcept {
  plaintext_size = 0;
  if (!established_) return Error::no_session;
  if (frame.direction != Direction::downlink) return Error::invalid_argument;
  if (!(frame.dev_id == credentials_.dev_id)) return Error::dev_id_mismatch;
  if (frame.sessctr != sessctr_) return Error::unknown_session;
  // check() does not move the window; it only spares a decryption for an obvious replay.
  if (Error e = downlink_window_.check(frame.seq); e != Error::ok) return e;
  if (Error e = open_data_frame(crypto_, traffic_.down, frame, plaintext, plaintext_size);
      e != Error::ok)
    return e;
  if (Error e = downlink_window_.accept(frame.seq); e != Error::ok) {
    secure_wipe(plaintext.first(plaintext_size));
    plaintext_size = 0;
    return e;
  }
  return Error::ok;
}

Error DeviceSession::open_downlink(const DataFrame& frame, MutableByteView plaintext,
                                   std::size_t& plaintext_size) noexcept {
  return open_downlink_frame(frame, plaintext, plaintext_size);
}

Error DeviceSession::open_downlink(const DataFrameView& frame, MutableByteView plaintext,
                                   std::size_t& plaintext_size) noexcept {
  return open_downlink_frame(frame, plaintext, plaintext_size);
}

}  // namespace dsekp
