// One simulated device's protocol behaviour (see device_agent.hpp).
#include "device/device_agent.hpp"

#include <time.h>

#include <algorithm>
#include <array>

#include "dsekp/psk_baseline.hpp"

namespace dsekp::device {
namespace {

constexpr std::uint64_t kSensorStream = 1;
constexpr std::uint64_t kEventStream = 2;
constexpr std::uint64_t kStartStream = 3;
constexpr std::size_t kMaxRememberedSessctrs = 4096;

/// The smallest t in [lo, hi] with pred(t), for a predicate that is false up to some time and
/// true from then on; kNever if pred(hi) is false. The core answers "is a retransmission due at
/// t?" and "has the INIT expired at t?" but does not say when; both are monotone in t, so a
/// binary search finds the exact time in a few dozen calls of a trivial const function.
template <typename Pred>
std::uint64_t first_true(std::uint64_t lo, std::uint64_t hi, Pred pred) {
  if (!pred(hi)) return kNever;
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (pred(mid)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

ByteView as_bytes(std::string_view s) {
  return ByteView(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
}

}  // namespace

std::uint64_t unix_time_us() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec) / 1000u;
}

DeviceAgent::DeviceAgent(const ProvisionedDevice& device, std::uint64_t index,
                         const AgentConfig& config, const AgentContext& context,
                         Publisher& publisher)
    : device_(device),
      config_(config),
      context_(context),
      publisher_(publisher),
      sensor_(config.sensor, SimRandom::derive(config.seed, index, kSensorStream).next()),
      events_(SimRandom::derive(config.seed, index, kEventStream)),
      start_offset_ms_(SimRandom::derive(config.seed, index, kStartStream)
                           .below(std::max<std::uint32_t>(config.interval_ms, 1))) {
  if (device.ratchet && config.mode == Mode::dsekp) {
    if (config.ratchet_dir.empty())
      throw SecretFileError(std::string(device.credentials.dev_id.str()) +
                            " ratchets its secret: --ratchet-dir DIR must say where it keeps it");
    secret_store_.emplace(config.ratchet_dir, device.credentials.dev_id, device.generation);
  }
}

void DeviceAgent::give_up(std::string reason) {
  if (failure_.empty()) {
    failure_ = std::move(reason);
    ++context_.counters->devices_failed;
  }
}

void DeviceAgent::on_link_ready(std::uint64_t now_ms) {
  ready_ = true;
  if (!first_ready_seen_) {
    first_ready_seen_ = true;
    boot_at_ms_ = now_ms + start_offset_ms_;
  }
}

void DeviceAgent::on_link_lost() {
  // QoS 1 publishes in flight stay counted as unacknowledged: the client library resends them
  // after reconnecting, and their PUBACK then arrives under the same message id.
  ready_ = false;
}

void DeviceAgent::on_publish_acked(int mid) {
  const auto it = std::find(unacked_mids_.begin(), unacked_mids_.end(), mid);
  if (it == unacked_mids_.end()) return;  // an INIT, or not ours
  unacked_mids_.erase(it);
  ++context_.counters->packets_acked;
}

void DeviceAgent::on_message(std::string_view topic, ByteView payload) {
  if (config_.mode != Mode::dsekp || !session_) return;
  if (topic == device_.topics.ack) {
    handle_ack(payload);
  } else if (topic == device_.topics.down) {
    handle_downlink(payload);
  } else if (topic == device_.topics.rekey) {
    handle_rekey(payload);
  }
}

void DeviceAgent::handle_ack(ByteView payload) {
  AckFrame ack;
  if (decode_ack(payload, ack) != Error::ok) {
    ++context_.counters->bad_acks;
    return;
  }
  const Error e = session_->handle_ack(ack);
  switch (e) {
    case Error::ok:
      end_handshake(HandshakeOutcome::ok, unix_time_us() / 1000);
      failed_handshakes_ = 0;
      ever_established_ = true;
      init_wire_.clear();
      break;  // confirmation_pending(): step() sends the first DATA frame at once
    case Error::secret_store_failed:
      // Ratchet mode: nothing changed and the INIT stays open; its retransmission brings the
      // same ACK back and the write is tried again.
      ++context_.counters->secret_store_failures;
      break;
    case Error::bad_ack_proof:
    case Error::ack_rejected:
      // The core keeps the handshake open (a genuine ACK may still come); if none does, the
      // handshake ends as rejected rather than timeout.
      ++context_.counters->bad_acks;
      handshake_.bad_ack_seen = true;
      break;
    default:  // no_pending_handshake, ack_mismatch: e.g. the answer to a retransmitted INIT
      ++context_.counters->stray_acks;
      break;
  }
}

void DeviceAgent::handle_downlink(ByteView payload) {
  DataFrame frame;
  std::array<std::uint8_t, kMaxPayloadSize> plaintext{};
  std::size_t size = 0;
  if (decode_data(payload, Direction::downlink, frame) == Error::ok &&
      session_->open_downlink(frame, MutableByteView(plaintext), size) == Error::ok) {
    ++context_.counters->downlinks_received;
  } else {
    ++context_.counters->downlinks_rejected;
  }
  secure_wipe(MutableByteView(plaintext));
}

void DeviceAgent::handle_rekey(ByteView payload) {
  RekeyFrame request;
  Error e = decode_rekey(payload, request);
  if (e == Error::ok) e = session_->handle_rekey(request, last_step_ms_);
  if (e != Error::ok) {
    ++context_.counters->rekey_requests_ignored;
    return;
  }
  ++context_.counters->rekey_requests_accepted;
  // rekey_due() is now true: the same path as a rekey before the seq runs out.
  if (!done()) start_handshake();
}

std::uint64_t DeviceAgent::step(std::uint64_t now_ms) {
  last_step_ms_ = now_ms;
  // A few rounds: one action can make the next due at once (a reset starts a handshake whose
  // INIT is due immediately; an ACK makes the confirming DATA frame due).
  for (int round = 0; round < 4 && step_once(now_ms); ++round) {
  }
  const std::uint64_t wake = next_wake(now_ms);
  return wake <= now_ms ? now_ms + 1 : wake;
}

bool DeviceAgent::step_once(std::uint64_t now_ms) {
  if (!ready_ || stopped_ || failed() || done()) return false;
  if (!booted_) {
    if (now_ms < boot_at_ms_) return false;
    boot(now_ms);
    return true;
  }
  if (config_.mode == Mode::psk) {
    if (now_ms < next_data_ms_) return false;
    send_data(now_ms);
    return true;
  }
  DeviceSession& s = *session_;
  if (s.handshake_pending() && s.handshake_expired(now_ms)) {
    end_handshake(handshake_.bad_ack_seen ? HandshakeOutcome::rejected : HandshakeOutcome::timeout,
                  std::nullopt);
    if (++failed_handshakes_ >= config_.max_handshake_failures) {
      give_up(std::to_string(failed_handshakes_) +
              " handshake(s) in a row ended without a valid ACK (is the edge running and does it "
              "know this device?)");
      return false;
    }
    start_handshake();
    return true;
  }
  if (s.handshake_pending() && s.retransmit_due(now_ms)) {
    send_init(now_ms);
    return true;
  }
  if (s.established() && (s.confirmation_pending() || now_ms >= next_data_ms_)) {
    send_data(now_ms);
    return true;
  }
  return false;
}

std::uint64_t DeviceAgent::next_wake(std::uint64_t now_ms) const {
  if (!ready_ || stopped_ || failed() || done()) return kNever;
  if (!booted_) return boot_at_ms_;
  if (config_.mode == Mode::psk) return next_data_ms_;
  const DeviceSession& s = *session_;
  std::uint64_t wake = kNever;
  if (s.handshake_pending()) {
    const DeviceConfig& c = config_.session;
    wake = std::min(wake, first_true(now_ms, now_ms + c.retransmit_max_ms + 1u,
                                     [&s](std::uint64_t t) { return s.retransmit_due(t); }));
    wake = std::min(wake, first_true(now_ms, now_ms + c.init_max_age_ms + 1u,
                                     [&s](std::uint64_t t) { return s.handshake_expired(t); }));
  }
  if (s.established()) wake = std::min(wake, s.confirmation_pending() ? now_ms : next_data_ms_);
  return wake;
}

void DeviceAgent::boot(std::uint64_t now_ms) {
  booted_ = true;
  frames_since_boot_ = 0;
  if (config_.mode == Mode::psk) {
    next_data_ms_ = now_ms;
    return;
  }
  if (secret_store_) {
    // Ratchet mode: the secret the device stored last, which a reboot does not lose.
    DeviceCredentials stored{device_.credentials.dev_id, device_.credentials.dev_secret.clone(),
                             device_.credentials.edge_salt, 0};
    (void)secret_store_->load(stored);
    session_.reset();  // before the ratchet it points to
    ratchet_.emplace(*secret_store_);
    DeviceConfig session_config = config_.session;
    session_config.ratchet = &*ratchet_;
    session_.emplace(crypto_, stored, session_config);
  } else {
    session_.emplace(crypto_, device_.credentials, config_.session);
  }
  start_handshake();
}

void DeviceAgent::reboot(std::uint64_t now_ms) {
  ++context_.counters->resets;
  // A power cycle: RAM is lost, so is a handshake in flight (a rekey) and every key.
  if (handshake_.open) end_handshake(HandshakeOutcome::timeout, std::nullopt);
  session_.reset();
  crypto_.forget_keys();
  init_wire_.clear();
  booted_ = false;
  boot(now_ms);
}

void DeviceAgent::start_handshake() {
  InitFrame init;
  const auto now_s = static_cast<std::uint32_t>(unix_time_us() / 1'000'000u);
  // Within one run a device never reuses a sessctr, also across reboots (as if it kept the
  // ones it used in flash): the analysis identifies a packet by (dev_id, sessctr, seq), so two
  // sessions with one sessctr would look like duplicates. Redraws are rare (~n/65536).
  session_->restore_last_init_t(last_init_t_);
  for (int draw = 0;; ++draw) {
    if (const Error e = session_->start_handshake(now_s, *context_.rng, init); e != Error::ok) {
      give_up(std::string("cannot start a handshake: ") + error_name(e));
      return;
    }
    const bool reused = std::find(used_sessctrs_.begin(), used_sessctrs_.end(), init.sessctr) !=
                        used_sessctrs_.end();
    if (!reused || draw >= 16 || used_sessctrs_.size() >= kMaxRememberedSessctrs) break;
  }
  if (used_sessctrs_.size() < kMaxRememberedSessctrs) used_sessctrs_.push_back(init.sessctr);
  last_init_t_ = init.t;
  std::array<std::uint8_t, kMaxFrameSize> wire{};
  std::size_t n = 0;
  if (const Error e = encode(init, config_.encoding, MutableByteView(wire), n); e != Error::ok) {
    give_up(std::string("cannot encode the INIT: ") + error_name(e));
    return;
  }
  init_wire_.assign(wire.begin(), wire.begin() + static_cast<std::ptrdiff_t>(n));
  handshake_ = OpenHandshake{};
  handshake_.sessctr = init.sessctr;
}

void DeviceAgent::send_init(std::uint64_t now_ms) {
  int mid = 0;
  // A refused publish still goes through note_init_sent: the backoff then applies to the next
  // try instead of a busy loop, as a lost INIT would.
  if (!publisher_.publish(device_.topics.init, ByteView(init_wire_), config_.qos, mid))
    ++context_.counters->publish_errors;
  if (!handshake_.open) {
    handshake_.open = true;
    handshake_.first_sent_ms = unix_time_us() / 1000;
    ++context_.counters->handshakes_started;
  } else {
    ++context_.counters->retransmissions;
  }
  ++handshake_.attempts;
  if (const Error e = session_->note_init_sent(now_ms, *context_.rng); e != Error::ok)
    give_up(std::string("cannot schedule the INIT retransmission: ") + error_name(e));
}

void DeviceAgent::end_handshake(HandshakeOutcome outcome, std::optional<std::uint64_t> ack_ms) {
  if (!handshake_.open) return;
  handshake_.open = false;
  FleetCounters& c = *context_.counters;
  switch (outcome) {
    case HandshakeOutcome::ok:
      ++c.handshakes_ok;
      break;
    case HandshakeOutcome::timeout:
      ++c.handshakes_timeout;
      break;
    case HandshakeOutcome::rejected:
      ++c.handshakes_rejected;
      break;
  }
  if (context_.handshake_log == nullptr) return;
  HandshakeLogRow row;
  row.dev_id = device_.credentials.dev_id.str();
  row.sessctr = handshake_.sessctr;
  row.init_sent_ms = handshake_.first_sent_ms;
  if (outcome == HandshakeOutcome::ok && ack_ms)
    row.ack_recv_ms = std::max(*ack_ms, handshake_.first_sent_ms);  // a clock step back
  row.attempts = handshake_.attempts;
  row.outcome = outcome;
  context_.handshake_log->write(row);
}

void DeviceAgent::close_open_handshake() {
  end_handshake(handshake_.bad_ack_seen ? HandshakeOutcome::rejected : HandshakeOutcome::timeout,
                std::nullopt);
}

void DeviceAgent::schedule_next_data(std::uint64_t now_ms, bool off_schedule) {
  // Keep the cadence of the schedule (no drift), but never send a burst to catch up.
  const std::uint64_t interval = config_.interval_ms;
  const std::uint64_t next = off_schedule ? now_ms + interval : next_data_ms_ + interval;
  next_data_ms_ = next <= now_ms ? now_ms + interval : next;
}

void DeviceAgent::send_data(std::uint64_t now_ms) {
  std::array<char, 64> text{};
  const std::size_t text_size = SensorModel::format(sensor_.next(), std::span<char, 64>(text));
  const ByteView plaintext = as_bytes(std::string_view(text.data(), text_size));
  std::array<std::uint8_t, kMaxFrameSize> wire{};
  std::size_t n = 0;
  ClientLogRow row;
  DataFrame dsekp_frame;
  PskFrame psk_frame;
  // The send time goes into the frame, so it is taken before sealing; the publish call follows
  // a few microseconds later.
  row.sendts_us = unix_time_us();
  const std::uint64_t sendts_ms = row.sendts_us / 1000;
  bool off_schedule = false;
  Error e = Error::ok;
  const std::string* topic = nullptr;
  if (config_.mode == Mode::psk) {
    e = psk_seal(crypto_, device_.psk_key, device_.credentials.dev_id, psk_seq_, sendts_ms,
                 plaintext, *context_.rng, psk_frame);
    if (e == Error::ok) e = encode(psk_frame, config_.encoding, MutableByteView(wire), n);
    row.seq = psk_seq_++;
    row.iv = psk_frame.iv.view();
    row.tag = psk_frame.tag.view();
    row.ciphertext = psk_frame.ciphertext.view();
    topic = &device_.topics.psk;
  } else {
    off_schedule = session_->confirmation_pending();
    e = session_->seal(plaintext, sendts_ms, dsekp_frame);
    if (e == Error::ok) e = encode(dsekp_frame, config_.encoding, MutableByteView(wire), n);
    row.seq = dsekp_frame.seq;
    row.sessctr = dsekp_frame.sessctr;
    row.iv = dsekp_frame.iv.view();
    row.tag = dsekp_frame.tag.view();
    row.ciphertext = dsekp_frame.ciphertext.view();
    topic = &device_.topics.data;
  }
  schedule_next_data(now_ms, off_schedule);
  if (e != Error::ok) {
    ++context_.counters->seal_errors;
    if (config_.mode == Mode::dsekp && e == Error::session_exhausted &&
        !session_->handshake_pending())
      start_handshake();
    return;
  }
  int mid = 0;
  if (!publisher_.publish(*topic, ByteView(wire.data(), n), config_.qos, mid)) {
    ++context_.counters->publish_errors;
    return;
  }
  ++sent_;
  ++frames_since_boot_;
  FleetCounters& c = *context_.counters;
  ++c.packets_sent;
  if (config_.qos == 0) {
    ++c.packets_acked;  // nothing to wait for: "acknowledged" = handed to the socket
  } else {
    unacked_mids_.push_back(mid);
  }
  if (context_.data_log != nullptr) {
    row.dev_id = device_.credentials.dev_id.str();
    row.plaintext = std::string_view(text.data(), text_size);
    row.payload_size = n;
    context_.data_log->write(row);
  }
  after_data(now_ms);
}

void DeviceAgent::after_data(std::uint64_t now_ms) {
  if (done() || config_.mode != Mode::dsekp) return;
  const bool reset_now =
      (config_.reset_every > 0 && frames_since_boot_ % config_.reset_every == 0) ||
      (config_.reset_prob > 0 && events_.uniform01() < config_.reset_prob);
  if (reset_now) {
    reboot(now_ms);
  } else if (session_->rekey_due(now_ms) && !session_->handshake_pending()) {
    start_handshake();
  }
}

}  // namespace dsekp::device
