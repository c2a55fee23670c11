// libFuzzer target: the edge's message handler, EdgeService::handle(topic, payload, now_ms), fed
// a sequence of messages: arbitrary (topic, payload) pairs interleaved with genuine frames from
// real devices (DeviceSession and the PSK baseline on seeded RNGs), their replays, byte-level
// mutations and single-field forgeries, plus clock steps, edge restarts over the same store,
// downlinks and device reboots. A real registry (3 devices, one of them ratcheting its secret
// and booting from its flash, PROTOCOL.md 6.6; and one device the registry does not know) and a
// real SQLite store (edge_fixture.hpp), reset before every input.
//
// The input is a script (fuzz::ByteReader): two config bytes (downlink encoding, session limit,
// replay window, freshness window, clockless mode, topic prefix, disabled modes, INIT budget),
// then ops (script_ops.hpp, EdgeOp). Properties, each aborting when violated:
//   * handle() never fails transiently on a healthy store (registry/store/sink/internal);
//   * a rejection publishes nothing (but a decodable REKEY request for an unknown_session),
//     commits no sink row and claims no session change; an accepted frame commits exactly its
//     own row (none for an empty plaintext); an accepted INIT publishes one ACK on the
//     device's ACK topic, decodable, in the INIT's encoding;
//   * authenticity: an accepted frame's plaintext is one a device sealed, from that dev_id;
//   * no replay: a DSEKP frame is accepted at most once, across edge restarts too (PSK has no
//     replay protection, by design);
//   * a device accepts only ACKs and downlink frames the edge published for it;
//   * legitimate devices lose nothing: after a device took an ACK, its frames are accepted (unless
//     a newer INIT of the same device replaced the still unconfirmed session, PROTOCOL.md 6.3),
//     and a confirmed device opens every downlink frame sent to it;
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "crypto/openssl/openssl_crypto.hpp"
#include "crypto/testing/seeded_rng.hpp"
#include "dsekp/codec.hpp"
#include "dsekp/device_ratchet.hpp"
#include "dsekp/device_session.hpp"
#include "dsekp/psk_baseline.hpp"
#include "edge/service/edge_service.hpp"
#include "edge_fixture.hpp"
#include "fuzz_support.hpp"
#include "script_ops.hpp"

namespace {

using namespace dsekp;
using edge::EdgeReason;
using edge::HandleResult;
using edge::MessageKind;
using fuzz::Bytes;
using fuzz::check;
using fuzz::EdgeFixture;

constexpr std::uint64_t kStartMs = 1'764'460'800'000;  // the golden trace's t, in ms
constexpr std::size_t kMaxHistory = 64;
constexpr int kMaxSteps = 200;

// What the runs reached, printed at exit when DSEKP_FUZZ_STATS is set (scripts/fuzz.sh sets it):
// evidence that the properties above were exercised, not just compiled.
struct Reached {
  std::uint64_t inputs = 0, messages = 0, handshakes = 0, dsekp_frames = 0, psk_frames = 0;
  std::uint64_t acks_taken = 0, downlinks_opened = 0, restarts = 0;
  std::uint64_t ratchet_steps = 0, ratchet_catch_ups = 0;  // confirmations; INITs ahead
  std::uint64_t data_liveness_checks = 0, downlink_liveness_checks = 0;
  std::map<std::string, std::uint64_t> reasons;  // every outcome of handle(), by name

  ~Reached() {
    if (std::getenv("DSEKP_FUZZ_STATS") == nullptr || inputs == 0) return;
    std::string by_reason;
    for (const auto& [name, n] : reasons) by_reason += " " + name + "=" + std::to_string(n);
    std::fprintf(stderr,
                 "fuzz_edge_service reached: inputs=%llu messages=%llu handshakes=%llu "
                 "dsekp_frames=%llu psk_frames=%llu acks_taken=%llu downlinks_opened=%llu "
                 "restarts=%llu ratchet(steps=%llu catch_ups=%llu) "
                 "liveness_checks(data=%llu downlink=%llu)\n"
                 "fuzz_edge_service outcomes:%s\n",
                 ull(inputs), ull(messages), ull(handshakes), ull(dsekp_frames), ull(psk_frames),
                 ull(acks_taken), ull(downlinks_opened), ull(restarts), ull(ratchet_steps),
                 ull(ratchet_catch_ups), ull(data_liveness_checks), ull(downlink_liveness_checks),
                 by_reason.c_str());
  }
  static unsigned long long ull(std::uint64_t v) { return v; }
};
Reached g_reached;

// Keeps the rows of the units that committed during one handle() call.
class CheckingSink final : public edge::SinkWriter {
 public:
  bool write(const edge::AcceptedFrame& row) override {
    staged_.push_back(row);
    return true;
  }
  void committed() noexcept override {
    for (auto& row : staged_) committed_.push_back(std::move(row));
    staged_.clear();
  }
  void rolled_back() noexcept override { staged_.clear(); }
  std::vector<edge::AcceptedFrame> take() {
    check(staged_.empty(), "sink rows left staged after handle() returned");
    return std::exchange(committed_, {});
  }

 private:
  std::vector<edge::AcceptedFrame> staged_;
  std::vector<edge::AcceptedFrame> committed_;
};

struct Message {
  std::string topic;
  Bytes payload;
  MessageKind kind = MessageKind::unknown;  // what the bytes were made as
};

// A ratcheting device's flash (PROTOCOL.md 6.6): the pair it boots from, kept across reboots.
struct Flash final : SecretStore {
  bool store_secret(const DevSecret& next, std::uint32_t next_epoch) noexcept override {
    secret = next.clone();
    epoch = next_epoch;
    written = true;
    return true;
  }
  DevSecret secret;
  std::uint32_t epoch = 0;
  bool written = false;
};

// One device as the harness drives it, with what the properties need to know about it.
struct Device {
  std::unique_ptr<SeededRng> rng;
  Flash flash;                             // the ratcheting device's
  std::unique_ptr<DeviceRatchet> ratchet;  // the ratcheting device's, lost at a reboot
  std::unique_ptr<DeviceSession> session;
  std::optional<Bytes> newest_ack;  // payload of the newest ACK the edge published to it
  std::vector<AckFrame> acks;       // every ACK the edge published to it
  bool keys_at_edge = false;        // the edge holds the session the device uses
  bool confirmed = false;           // ...and a DATA frame under it was accepted
  std::uint32_t psk_seq = 0;
  std::optional<std::uint32_t> last_down_seq;
};

struct Sealed {
  std::size_t device = 0;
  bool dsekp = true;
  bool accepted = false;
};

class Run {
 public:
  Run(fuzz::ByteReader& in, std::uint64_t seed, OpenSslCrypto& edge_crypto,
      OpenSslCrypto& device_crypto)
      : in_(in),
        fixture_(EdgeFixture::instance()),
        edge_crypto_(edge_crypto),
        device_crypto_(device_crypto),
        seed_(seed),
        edge_rng_(seed ^ 3) {
    const std::uint8_t a = in_.u8();
    const std::uint8_t b = in_.u8();
    constexpr std::array<std::uint32_t, 4> kEstablished = {5, 1, 2, 3};
    constexpr std::array<std::uint32_t, 8> kWindows = {64, 1, 2, 4, 8, 16, 32, 1024};
    config_.max_established = kEstablished[(a >> 1) & 3];
    config_.replay_window = kWindows[(a >> 3) & 7];
    clockless_ = (a & 0x80) != 0;
    // A short freshness window lets INIT replay-cache entries expire within one script.
    config_.max_skew_s = clockless_ ? 0 : ((a & 0x40) != 0 ? 5 : 300);
    // The INIT budget: the default, a burst of 2, or none (capacity 0), which lets a script
    // fill the 32-entry INIT replay cache.
    constexpr std::array<std::uint32_t, 4> kBursts = {8, 2, 0, 8};
    config_.init_rate.capacity = kBursts[(b >> 4) & 3];
    config_.topic_prefix = (b & 1) != 0 ? "site1/" : "";
    const unsigned modes = (b >> 1) & 7;  // one in eight runs without DSEKP, one without PSK
    config_.dsekp_enabled = modes != 7;
    config_.psk_enabled = modes != 6;
    for (std::size_t i = 0; i < EdgeFixture::kDevices; ++i) reboot(i);
    start_edge();
  }

  void run() {
    for (int steps = 0; !in_.empty() && steps < kMaxSteps; ++steps) step();
  }

 private:
  void step() {
    switch (static_cast<fuzz::EdgeOp>(in_.pick(fuzz::kEdgeOpCount))) {
      case fuzz::EdgeOp::raw:
        raw();
        break;
      case fuzz::EdgeOp::init:
        init(device_index(), false);
        break;
      case fuzz::EdgeOp::init_again:
        init(device_index(), true);
        break;
      case fuzz::EdgeOp::take_ack:
        take_ack(device_index());
        break;
      case fuzz::EdgeOp::data:
        data(device_index());
        break;
      case fuzz::EdgeOp::psk:
        psk(device_index());
        break;
      case fuzz::EdgeOp::replay:
        if (!history_.empty()) {
          const Message m = history_[in_.u8() % history_.size()];
          deliver(m, false);
        }
        break;
      case fuzz::EdgeOp::mutate:
        if (!history_.empty()) {
          Message m = history_[in_.u8() % history_.size()];
          fuzz::mutate(m.payload, in_);
          deliver(m, false);
        }
        break;
      case fuzz::EdgeOp::tamper:
        tamper();
        break;
      case fuzz::EdgeOp::clock:
        clock();
        break;
      case fuzz::EdgeOp::restart:
        ++g_reached.restarts;
        start_edge();
        break;
      case fuzz::EdgeOp::downlink:
        downlink(device_index());
        break;
      case fuzz::EdgeOp::reboot:
        reboot(device_index());
        break;
    }
  }

  std::size_t device_index() { return in_.u8() % EdgeFixture::kDevices; }
  Encoding encoding() { return (in_.u8() & 1) != 0 ? Encoding::compact : Encoding::json; }
  std::uint32_t now_s() const { return static_cast<std::uint32_t>(now_ms_ / 1000); }
  const DevId& dev_id(std::size_t i) const { return fixture_.material(i).credentials.dev_id; }
  static DevId id_of(const std::string& text) {
    DevId id;
    (void)id.assign(text);  // an accepted frame's dev_id is valid
    return id;
  }
  std::optional<std::size_t> device_of(const DevId& id) const {
    for (std::size_t i = 0; i < EdgeFixture::kDevices; ++i) {
      if (dev_id(i) == id) return i;
    }
    return std::nullopt;
  }

  void start_edge() {
    service_.reset();
    service_ = std::make_unique<edge::EdgeService>(
        edge::EdgeServiceParts{fixture_.registry(), fixture_.store(), fixture_.generations(), sink_,
                               edge_crypto_, edge_rng_},
        config_);
  }

  void reboot(std::size_t i) {
    Device& d = devices_[i];
    d.session.reset();
    d.ratchet.reset();
    d.rng = std::make_unique<SeededRng>(seed_ ^ (100 + i + 16 * reboots_++));
    DeviceCredentials c;
    const edge::DeviceMaterial& m = fixture_.material(i);
    c.dev_id = m.credentials.dev_id;
    c.dev_secret = m.credentials.dev_secret.clone();
    c.edge_salt = m.edge_salt;
    DeviceConfig dc;
    dc.clockless = clockless_;
    if (i == EdgeFixture::kRatcheting) {
      // It boots from its flash (the provisioned secret until its first step).
      if (d.flash.written) {
        c.dev_secret = d.flash.secret.clone();
        c.epoch = d.flash.epoch;
      }
      d.ratchet = std::make_unique<DeviceRatchet>(d.flash);
      dc.ratchet = d.ratchet.get();
    }
    d.session = std::make_unique<DeviceSession>(device_crypto_, c, dc);
    d.newest_ack.reset();
    d.keys_at_edge = false;
    d.confirmed = false;
    d.last_down_seq.reset();
  }

  // ---- the messages ----

  void raw() {
    const std::uint8_t selector = in_.u8();
    Message m;
    switch (selector % 8) {
      case 0:
        m.topic = service_->topics().init();
        break;
      case 1:
        m.topic = service_->topics().data();
        break;
      case 2:
        m.topic = service_->topics().psk();
        break;
      case 3:
        m.topic = service_->topics().ack("esp32-01");
        break;
      case 4:
        m.topic = service_->topics().downlink("esp32-01");
        break;
      case 5:
        m.topic = "site2/dsekp/data";
        break;
      case 6:
        break;  // the empty topic
      default: {
        const Bytes t = in_.bytes8();
        m.topic.assign(t.begin(), t.end());
        break;
      }
    }
    m.payload = in_.bytes16();
    deliver(m, true);
  }

  // The encoding byte's bit 1 holds a frame back: it goes into the history without being
  // delivered, for a later replay op to deliver late (reordered, or a withheld INIT).
  static bool held(std::uint8_t enc_byte) { return (enc_byte & 2) != 0; }
  static Encoding encoding_of(std::uint8_t enc_byte) {
    return (enc_byte & 1) != 0 ? Encoding::compact : Encoding::json;
  }

  void init(std::size_t i, bool again) {
    Device& d = devices_[i];
    const std::uint8_t enc = in_.u8();
    if (!again || !d.session->handshake_pending()) {
      InitFrame frame;
      if (d.session->start_handshake(now_s(), *d.rng, frame) != Error::ok) return;
    }
    (void)d.session->note_init_sent(now_ms_, *d.rng);
    const Message m{service_->topics().init(),
                    fuzz::encode_or_fail(d.session->current_init(), encoding_of(enc)),
                    MessageKind::init};
    if (held(enc)) {
      remember(m);
    } else {
      deliver(m, true);
    }
  }

  void take_ack(std::size_t i) {
    Device& d = devices_[i];
    if (!d.newest_ack) return;
    deliver_ack(i, *d.newest_ack);
  }

  void deliver_ack(std::size_t i, const Bytes& payload) {
    Device& d = devices_[i];
    AckFrame ack;
    if (decode_ack(ByteView(payload), ack) != Error::ok) return;
    if (d.session->handle_ack(ack) != Error::ok) return;
    bool genuine = false;
    for (const AckFrame& a : d.acks) genuine = genuine || fuzz::same(a, ack);
    check(genuine, "a device accepted an ACK the edge never published to it");
    ++g_reached.acks_taken;
    d.keys_at_edge = true;
    d.confirmed = false;
    d.last_down_seq.reset();
  }

  void data(std::size_t i) {
    Device& d = devices_[i];
    const std::uint8_t enc = in_.u8();
    const std::string reading =
        "{\"d\":" + std::to_string(i) + ",\"n\":" + std::to_string(++readings_) + "}";
    DataFrame frame;
    if (d.session->seal(fuzz::view_of(reading), now_ms_, frame) != Error::ok) return;
    sealed_[reading] = Sealed{i, true, false};
    const Message m{service_->topics().data(), fuzz::encode_or_fail(frame, encoding_of(enc)),
                    MessageKind::data};
    if (held(enc)) {
      remember(m);
      return;
    }
    const HandleResult r = deliver(m, true);
    if (d.keys_at_edge && config_.dsekp_enabled) {
      ++g_reached.data_liveness_checks;
      check(r.ok(), "a legitimate device's DATA frame was refused", r.reason_name());
    }
    if (r.ok()) d.confirmed = true;
  }

  void psk(std::size_t i) {
    Device& d = devices_[i];
    const Encoding enc = encoding();
    const std::string reading =
        "{\"p\":" + std::to_string(i) + ",\"n\":" + std::to_string(++readings_) + "}";
    PskFrame frame;
    const edge::DeviceMaterial& m = fixture_.material(i);
    if (psk_seal(device_crypto_, m.credentials.psk_key, m.credentials.dev_id, d.psk_seq++, now_ms_,
                 fuzz::view_of(reading), *d.rng, frame) != Error::ok)
      return;
    sealed_[reading] = Sealed{i, false, false};
    deliver({service_->topics().psk(), fuzz::encode_or_fail(frame, enc), MessageKind::psk}, true);
  }

  // An earlier INIT, DATA or PSK frame with one field changed, validly re-encoded: a forgery.
  void tamper() {
    if (history_.empty()) return;
    Message m = history_[in_.u8() % history_.size()];
    const std::uint8_t field = in_.u8();
    const std::uint32_t value = in_.u32();
    const std::uint8_t bit = static_cast<std::uint8_t>(1u << (field >> 5));
    const Encoding enc = detect_encoding(ByteView(m.payload));
    const DevId& other = dev_id(value % EdgeFixture::kDevices);
    if (m.kind == MessageKind::init) {
      InitFrame f;
      if (decode_init(ByteView(m.payload), f) != Error::ok) return;
      switch (field % 5) {
        case 0:
          f.sessctr = static_cast<std::uint16_t>(f.sessctr ^ (value | 1));
          break;
        case 1:
          f.t ^= value | 1;
          break;
        case 2:
          f.dev_nonce.data()[value % kNonceSize] ^= bit;
          break;
        case 3:
          f.proof.data()[value % kProofSize] ^= bit;
          break;
        default:
          f.dev_id = other;
          break;
      }
      m.payload = fuzz::encode_or_fail(f, enc);
    } else if (m.kind == MessageKind::data) {
      DataFrame f;
      if (decode_data(ByteView(m.payload), Direction::uplink, f) != Error::ok) return;
      switch (field % 7) {
        case 0:
          f.seq ^= value | 1;
          break;
        case 1:
          f.sendts_ms = (f.sendts_ms ^ (value | 1)) & ((std::uint64_t{1} << 53) - 1);
          break;
        case 2:
          f.sessctr = static_cast<std::uint16_t>(f.sessctr ^ (value | 1));
          break;
        case 3:
          f.dev_id = other;
          break;
        case 4:
          f.tag.data()[value % kTagSize] ^= bit;
          break;
        case 5:
          f.iv.data()[value % kNonceSize] ^= bit;
          break;
        default:
          flip_ciphertext(f.ciphertext, value, bit);
          break;
      }
      m.payload = fuzz::encode_or_fail(f, enc);
    } else if (m.kind == MessageKind::psk) {
      PskFrame f;
      if (decode_psk(ByteView(m.payload), f) != Error::ok) return;
      switch (field % 6) {
        case 0:
          f.seq ^= value | 1;
          break;  // not authenticated: accepted, by design
        case 1:
          f.sendts_ms = (f.sendts_ms ^ (value | 1)) & ((std::uint64_t{1} << 53) - 1);
          break;
        case 2:
          f.dev_id = other;
          break;
        case 3:
          f.tag.data()[value % kTagSize] ^= bit;
          break;
        case 4:
          f.iv.data()[value % kNonceSize] ^= bit;
          break;
        default:
          flip_ciphertext(f.ciphertext, value, bit);
          break;
      }
      m.payload = fuzz::encode_or_fail(f, enc);
    } else {
      return;
    }
    deliver(m, false);
  }

  static void flip_ciphertext(BoundedBytes<kMaxPayloadSize>& ct, std::uint32_t value,
                              std::uint8_t bit) {
    if (ct.size() == 0) return;
    Bytes b(ct.view().begin(), ct.view().end());
    b[value % b.size()] ^= bit;
    (void)ct.assign(ByteView(b));
  }

  void clock() {
    const std::uint16_t amount = in_.u16();
    switch (amount % 4) {
      case 0:
        now_ms_ += amount;
        break;
      case 1:
        now_ms_ += std::uint64_t{amount} * 1000 / 16;
        break;
      case 2:
        now_ms_ += static_cast<std::uint64_t>(amount % 1024) * 60'000;
        break;
      default:  // the edge's clock steps back (NTP correction)
        now_ms_ -= static_cast<std::uint64_t>(amount % 1024) * 1000;
        break;
    }
  }

  void downlink(std::size_t i) {
    Device& d = devices_[i];
    const std::string command = "{\"cmd\":" + std::to_string(++commands_) + "}";
    const HandleResult r =
        service_->send_downlink(dev_id(i).str(), fuzz::view_of(command), now_ms_);
    check(!edge::is_transient(r.reason), "send_downlink failed transiently", r.reason_name());
    if (!r.ok()) {
      check(r.publishes.empty(), "a refused downlink published something");
      return;
    }
    check(r.publishes.size() == 1 && r.downlink_seq.has_value(), "a downlink without one frame");
    const edge::Publish& p = r.publishes[0];
    check(p.topic == service_->topics().downlink(dev_id(i).str()), "downlink on another topic",
          p.topic);
    remember({p.topic, p.payload, MessageKind::unknown});
    DataFrame frame;
    check(decode_data(ByteView(p.payload), Direction::downlink, frame) == Error::ok,
          "the edge published a downlink frame that does not decode");
    check(frame.seq == *r.downlink_seq, "downlink_seq differs from the frame's seq");
    Bytes plain(frame.ciphertext.size());
    std::size_t n = 0;
    const Error e = d.session->open_downlink(frame, MutableByteView(plain), n);
    if (d.confirmed && d.keys_at_edge && frame.sessctr == d.session->sessctr() &&
        (!d.last_down_seq || frame.seq > *d.last_down_seq)) {
      ++g_reached.downlink_liveness_checks;
      check(e == Error::ok, "a confirmed device refused its downlink frame", error_name(e));
    }
    if (e != Error::ok) return;
    ++g_reached.downlinks_opened;
    d.last_down_seq = frame.seq;
    check(Bytes(plain.begin(), plain.begin() + static_cast<std::ptrdiff_t>(n)) ==
              Bytes(command.begin(), command.end()),
          "the device decrypted another downlink plaintext");
  }

  // ---- delivery and the per-message properties ----

  void remember(const Message& m) {
    if (history_.size() < kMaxHistory) history_.push_back(m);
  }

  HandleResult deliver(const Message& m, bool keep) {
    if (keep) remember(m);
    const HandleResult r = service_->handle(m.topic, ByteView(m.payload), now_ms_);
    ++g_reached.messages;
    ++g_reached.reasons[r.reason_name()];
    if (r.handshake_accepted) ++g_reached.handshakes;
    if (r.ratcheted) ++g_reached.ratchet_steps;
    if (r.ratchet_steps > 0) ++g_reached.ratchet_catch_ups;
    if (r.frame) ++(r.kind == MessageKind::psk ? g_reached.psk_frames : g_reached.dsekp_frames);
    const std::vector<edge::AcceptedFrame> rows = sink_.take();
    const std::string what = std::string(edge::message_kind_name(r.kind)) + " " + r.reason_name() +
                             " topic=" + m.topic + " payload=" + fuzz::printable(m.payload);
    check(!edge::is_transient(r.reason), "handle() failed transiently", what + " " + r.detail);
    if (service_->topics().classify(m.topic) == MessageKind::unknown) {
      check(r.reason == EdgeReason::unknown_topic, "an unknown topic was not unknown_topic", what);
    }
    if (!r.ok()) {
      // The one publish a rejection may have: a REKEY request for a session the edge lacks
      // (for a ratcheting device, one under each of several secrets, all naming one frame).
      if (r.rekey_requested) {
        const std::size_t most = r.dev_id == std::string(dev_id(EdgeFixture::kRatcheting).str())
                                     ? edge::kMaxRekeyRequests
                                     : 1;
        check(
            r.error == Error::unknown_session && !r.publishes.empty() && r.publishes.size() <= most,
            "a REKEY request for anything but an unknown session", what);
        RekeyFrame first;
        for (const edge::Publish& p : r.publishes) {
          RekeyFrame request;
          check(decode_rekey(ByteView(p.payload), request) == Error::ok &&
                    p.topic == service_->topics().rekey(request.dev_id.str()),
                "a REKEY request that does not decode or is on another topic", what);
          if (&p == &r.publishes.front()) first = request;
          check(request.dev_id == first.dev_id && request.sessctr == first.sessctr &&
                    request.seq == first.seq,
                "REKEY requests of one frame that name different frames", what);
        }
      }
      check((r.rekey_requested || r.publishes.empty()) && !r.frame && rows.empty() &&
                !r.downlink_seq && !r.handshake_accepted && !r.session_confirmed &&
                !r.session_evicted,
            "a rejected message had an effect", what);
      check(r.reason != EdgeReason::protocol_error || r.error != Error::ok,
            "a protocol rejection without a reason", what);
      return r;
    }
    if (r.kind == MessageKind::init) {
      on_ack(m, r, what);
    } else {
      check(r.publishes.empty(), "an uplink frame published something", what);
      // An empty DATA frame is no reading: accepted without a row.
      const bool reading = !r.frame || !r.frame->plaintext.empty();
      check(r.frame.has_value() && rows.size() == (reading ? 1u : 0u),
            "an accepted frame without exactly one row (none for an empty one)", what);
      check(!reading || (rows[0].dev_id == r.frame->dev_id && rows[0].seq == r.frame->seq &&
                         rows[0].plaintext == r.frame->plaintext),
            "the committed row is not the accepted frame", what);
      on_accepted(*r.frame, r.kind, what);
    }
    return r;
  }

  void on_ack(const Message& m, const HandleResult& r, const std::string& what) {
    check(r.publishes.size() == 1 && !r.frame, "an accepted INIT without exactly one ACK", what);
    InitFrame init;
    check(decode_init(ByteView(m.payload), init) == Error::ok, "accepted INIT does not decode");
    const edge::Publish& p = r.publishes[0];
    check(p.topic == service_->topics().ack(init.dev_id.str()), "ACK on another topic", p.topic);
    check(detect_encoding(ByteView(p.payload)) == detect_encoding(ByteView(m.payload)),
          "ACK not in the INIT's encoding", what);
    AckFrame ack;
    check(decode_ack(ByteView(p.payload), ack) == Error::ok, "the published ACK does not decode");
    check(ack.dev_id == init.dev_id && ack.sessctr == init.sessctr, "ACK for another INIT", what);
    const std::optional<std::size_t> i = device_of(init.dev_id);
    check(i.has_value() && *i < EdgeFixture::kRegistered, "an ACK for an unregistered device");
    Device& d = devices_[*i];
    d.newest_ack = p.payload;
    d.acks.push_back(ack);  // all of them (at most one per step): the device check needs them
    // A new pending session replaces an unconfirmed one (PROTOCOL.md 6.3, key confirmation).
    if (r.handshake_accepted && !d.confirmed) d.keys_at_edge = false;
  }

  void on_accepted(const edge::AcceptedFrame& frame, MessageKind kind, const std::string& what) {
    const std::string plaintext(frame.plaintext.begin(), frame.plaintext.end());
    const auto it = sealed_.find(plaintext);
    if (it == sealed_.end() && kind == MessageKind::psk) {
      // A PSK key is the same in every input, so a PSK frame sealed in an earlier input can be
      // pasted into this one and opens (the baseline has no freshness): authentic all the same,
      // if it carries a reading of the device named in the frame.
      const std::optional<std::size_t> i = device_of(id_of(frame.dev_id));
      check(i && *i < EdgeFixture::kRegistered &&
                plaintext.rfind("{\"p\":" + std::to_string(*i) + ",\"n\":", 0) == 0,
            "the edge accepted a PSK plaintext its device never sealed", what);
      return;
    }
    check(it != sealed_.end(), "the edge accepted a plaintext no device sealed", what);
    Sealed& s = it->second;
    check(s.device < EdgeFixture::kRegistered, "the edge accepted a frame of an unknown device");
    check(frame.dev_id == dev_id(s.device).str(), "accepted under another dev_id", what);
    check(s.dsekp == (kind == MessageKind::data), "accepted in the other mode", what);
    if (s.dsekp) {
      check(!s.accepted, "a DSEKP frame was accepted twice (replay)", what);
      devices_[s.device].confirmed =
          devices_[s.device].confirmed || frame.sessctr == devices_[s.device].session->sessctr();
    }
    s.accepted = true;
  }

  fuzz::ByteReader& in_;
  EdgeFixture& fixture_;
  OpenSslCrypto& edge_crypto_;
  OpenSslCrypto& device_crypto_;
  std::uint64_t seed_;
  SeededRng edge_rng_;
  edge::EdgeServiceConfig config_;
  bool clockless_ = false;
  CheckingSink sink_;
  std::unique_ptr<edge::EdgeService> service_;
  std::array<Device, EdgeFixture::kDevices> devices_;
  std::size_t reboots_ = 0;
  std::vector<Message> history_;
  std::map<std::string, Sealed> sealed_;
  std::uint64_t now_ms_ = kStartMs;
  std::uint64_t readings_ = 0;
  std::uint64_t commands_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static OpenSslCrypto edge_crypto;
  static OpenSslCrypto device_crypto;
  EdgeFixture& fixture = EdgeFixture::instance();
  fixture.reset();
  ++g_reached.inputs;
  fuzz::ByteReader in(ByteView(data, size));
  Run(in, fuzz::input_seed(ByteView(data, size)), edge_crypto, device_crypto).run();
  return 0;
}
