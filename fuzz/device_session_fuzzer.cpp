// libFuzzer target: the device side, DeviceSession::handle_ack and open_downlink, fed arbitrary
// bytes after a real INIT, interleaved with genuine ACKs and downlink frames from a real edge
// (EdgeProtocol, in memory) so that the device reaches every state: awaiting ACK, established,
// rekeying, with replays, reordering and tampered copies of genuine frames.
//
// The device runs on mbedTLS (what devices use), the edge on OpenSSL; both draw from SeededRngs
// seeded from a hash of the input (fuzz::input_seed), and time comes from the input, so every run
// of an input is identical.
//
// The input is a script (fuzz::ByteReader): one config byte, then ops (see Op). Properties,
// each aborting when violated:
//   * authenticity: handle_ack() accepts only an ACK the edge produced (same fields), and
//     open_downlink() only a frame the edge sealed, with its plaintext;
//   * no replay: each sealed downlink frame is accepted at most once;
//   * a forged ACK never makes the device send under a key the edge does not have: after the
//     device accepts an ACK, its frames open at the edge (unless the edge has since accepted a
//     newer INIT while the session was still unconfirmed, which PROTOCOL.md allows to replace it);
//   * liveness: a genuine downlink frame delivered unmodified, in order, for the device's
//     confirmed session opens;
//   * REKEY (v1.1): handle_rekey() accepts only a request proven with DEV_SECRET, for the
//     device's current session and a seq it sent, and only an accepted one makes a rekey due;
//   * the ratchet (v1.2, PROTOCOL.md 6.6; the config byte's top bit, the device's secret store
//     failing on the writes the input picks): after every op the device's stored secret and the
//     edge's are those of their epochs, the device is never behind the edge and at most one
//     step ahead, the two are equal once a frame confirmed the device's session, and a REKEY
//     request is accepted only under the device's secret or the one before it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "crypto/mbedtls/mbedtls_crypto.hpp"
#include "crypto/openssl/openssl_crypto.hpp"
#include "crypto/testing/seeded_rng.hpp"
#include "dsekp/device_session.hpp"
#include "dsekp/edge_session.hpp"
#include "dsekp/key_schedule.hpp"
#include "fuzz_support.hpp"
#include "script_ops.hpp"

namespace {

using namespace dsekp;
using fuzz::Bytes;
using fuzz::check;

constexpr std::uint32_t kStartS = 1'764'460'800;  // the golden trace's t
constexpr std::size_t kMaxHistory = 32;

// What the runs reached, printed at exit when DSEKP_FUZZ_STATS is set (scripts/fuzz.sh sets it).
struct Reached {
  std::uint64_t inputs = 0, acks_accepted = 0, frames_opened = 0, downlinks_opened = 0;
  std::uint64_t uplink_liveness_checks = 0, downlink_liveness_checks = 0;
  std::map<std::string, std::uint64_t> ack_refusals, downlink_refusals,
      rekey_outcomes;  // by error name

  ~Reached() {
    if (std::getenv("DSEKP_FUZZ_STATS") == nullptr || inputs == 0) return;
    std::fprintf(stderr,
                 "fuzz_device_session reached: inputs=%llu acks_accepted=%llu "
                 "frames_opened_by_edge=%llu downlinks_opened=%llu "
                 "liveness_checks(uplink=%llu downlink=%llu)\n"
                 "fuzz_device_session ACK refusals:%s\n"
                 "fuzz_device_session downlink refusals:%s\n"
                 "fuzz_device_session REKEY outcomes:%s\n",
                 ull(inputs), ull(acks_accepted), ull(frames_opened), ull(downlinks_opened),
                 ull(uplink_liveness_checks), ull(downlink_liveness_checks),
                 list(ack_refusals).c_str(), list(downlink_refusals).c_str(),
                 list(rekey_outcomes).c_str());
  }
  static unsigned long long ull(std::uint64_t v) { return v; }
  static std::string list(const std::map<std::string, std::uint64_t>& m) {
    std::string out;
    for (const auto& [name, n] : m) out += " " + name + "=" + std::to_string(n);
    return out;
  }
};
Reached g_reached;

// The golden trace's device (PROTOCOL.md, "Golden trace").
struct Provisioning {
  DeviceCredentials credentials;
  DevSecret secret;
  EdgeSalt salt;
  Provisioning() {
    Bytes secret_bytes(kDevSecretSize), salt_bytes(16);
    for (std::size_t i = 0; i < secret_bytes.size(); ++i) secret_bytes[i] = std::uint8_t(i);
    for (std::size_t i = 0; i < salt_bytes.size(); ++i) salt_bytes[i] = std::uint8_t(0xa0 + i);
    check(secret.assign(ByteView(secret_bytes)) &&
              credentials.dev_id.assign("esp32-01") == Error::ok &&
              salt.assign(ByteView(salt_bytes)) == Error::ok,
          "provisioning");
    credentials.dev_secret = secret.clone();
    credentials.edge_salt = salt;
  }
};

const Provisioning& provisioning() {
  static const Provisioning p;
  return p;
}

// The device's secret storage: remembers the last write; fails the writes whose bit is set in
// the mask the input picked (a worn flash, a power cut during the write).
class FuzzSecretStore final : public SecretStore {
 public:
  bool store_secret(const DevSecret& secret, std::uint32_t epoch) noexcept override {
    const bool fail = ((fail_mask >> (calls++ % 8)) & 1u) != 0;
    if (fail) return false;
    stored = secret.clone();
    stored_epoch = epoch;
    return true;
  }
  std::uint8_t fail_mask = 0;
  std::uint32_t calls = 0;
  DevSecret stored;
  std::uint32_t stored_epoch = 0;
};

struct SealedDown {
  DataFrame frame;
  Bytes plaintext;
  bool accepted = false;
};

class Run {
 public:
  Run(fuzz::ByteReader& in, std::uint64_t seed, MbedtlsCrypto& device_crypto,
      OpenSslCrypto& edge_crypto)
      : in_(in),
        edge_crypto_(edge_crypto),
        device_rng_(seed ^ 1),
        edge_rng_(seed ^ 2),
        device_(device_crypto, provisioning().credentials, device_config(in.u8())),
        edge_(edge_crypto, edge_config(in.u8())) {
    if (ratchet_mode_) {
      store_.fail_mask = in_.u8();
      check(enable_ratchet(edge_state_, provisioning().credentials.dev_id, provisioning().secret),
            "enable_ratchet");
      chain_.push_back(provisioning().secret.clone());
    }
  }

  void run() {
    InitFrame init;
    check(device_.start_handshake(now_s(), device_rng_, init) == Error::ok, "first INIT");
    for (int steps = 0; !in_.empty() && steps < 256; ++steps) {
      step();
      if (ratchet_mode_) check_ratchet();
    }
  }

 private:
  DeviceConfig device_config(std::uint8_t b) {
    DeviceConfig c;
    c.downlink_window = 1u + (b & 0x3f);               // small windows reach too_old quickly
    c.first_seq = (b & 0x40) != 0 ? 0xFFFF'FFF0u : 0;  // near the end of the seq space
    ratchet_mode_ = (b & 0x80) != 0;
    if (ratchet_mode_) c.ratchet = &ratchet_;
    return c;
  }

  // ---- the ratchet (PROTOCOL.md 6.6) ----

  /// S_epoch, stepped from the provisioned secret by the library's own step.
  const DevSecret& secret_at(std::uint32_t epoch) {
    while (chain_.size() <= epoch) {
      DevSecret next;
      check(derive_next_secret(edge_crypto_, chain_.back(), provisioning().salt,
                               provisioning().credentials.dev_id, next) == Error::ok,
            "derive_next_secret");
      chain_.push_back(std::move(next));
    }
    return chain_[epoch];
  }

  void check_ratchet() {
    const std::uint32_t device = device_.epoch();
    const std::uint32_t edge = edge_state_.ratchet.epoch;
    check(edge_state_.ratchet.active, "the edge's state left ratchet mode");
    check(device >= edge, "the edge stepped past the device's secret");
    check(device <= edge + 1, "the device is more than one step ahead of the edge");
    check(store_.stored_epoch == device, "the device's epoch is not the one it stored");
    check(device == 0 || constant_time_equal(secret_at(device).view(), store_.stored.view()),
          "the device stored another secret than its epoch's");
    check(constant_time_equal(secret_at(edge).view(), edge_state_.ratchet.secret.view()),
          "the edge holds another secret than its epoch's");
  }

  /// The secret a REKEY request of the edge is proven under: the edge's current one.
  const DevSecret& edge_secret() const {
    return ratchet_mode_ ? edge_state_.ratchet.secret : provisioning().secret;
  }
  /// Whether `proof` is `r`'s under a secret the device may accept it under.
  bool acceptable_rekey_proof(const RekeyFrame& r) {
    if (!ratchet_mode_) return rekey_proof(r, provisioning().secret).equals(r.proof);
    const std::uint32_t d = device_.epoch();
    return rekey_proof(r, secret_at(d)).equals(r.proof) ||
           (d > 0 && rekey_proof(r, secret_at(d - 1)).equals(r.proof));
  }
  static EdgeConfig edge_config(std::uint8_t b) {
    EdgeConfig c;
    c.edge_salt = provisioning().salt;
    c.max_established = 1u + (b & 0x03);
    c.replay_window = 1u + ((b >> 2) & 0x1f);
    c.init_rate.capacity = (b & 0x80) != 0 ? 0 : 8;  // 0: no INIT budget (fills the replay cache)
    return c;
  }

  std::uint32_t now_s() const { return static_cast<std::uint32_t>(now_ms_ / 1000); }

  void step() {
    switch (static_cast<fuzz::DeviceOp>(in_.pick(fuzz::kDeviceOpCount))) {
      case fuzz::DeviceOp::raw_ack:
        deliver_ack(in_.bytes16());
        break;
      case fuzz::DeviceOp::raw_down:
        deliver_down(in_.bytes16(), std::nullopt, false);
        break;
      case fuzz::DeviceOp::edge_answers:
        edge_answers();
        break;
      case fuzz::DeviceOp::replay_ack:
        replay_ack();
        break;
      case fuzz::DeviceOp::seal:
        seal();
        break;
      case fuzz::DeviceOp::new_handshake: {
        InitFrame init;
        (void)device_.start_handshake(now_s(), device_rng_, init);
        break;
      }
      case fuzz::DeviceOp::downlink:
        downlink();
        break;
      case fuzz::DeviceOp::replay_down:
        replay_down();
        break;
      case fuzz::DeviceOp::clock:
        clock();
        break;
      case fuzz::DeviceOp::tamper_ack:
        tamper_ack();
        break;
      case fuzz::DeviceOp::tamper_down:
        tamper_down();
        break;
      case fuzz::DeviceOp::rekey:
        rekey();
        break;
    }
  }

  // ---- REKEY requests (PROTOCOL.md 6.1 step 7) ----

  Proof rekey_proof(const RekeyFrame& r, const DevSecret& secret) {
    Proof proof;
    check(rekey_request_proof(edge_crypto_, secret, provisioning().salt, r, proof) == Error::ok,
          "rekey proof");
    return proof;
  }

  // A request an edge that knows DEV_SECRET made (for the current or another session, a seq
  // some frames back), or one with a forged proof. Whatever the bytes: the device accepts only
  // a request with the proof of DEV_SECRET for its own current session, and only an accepted
  // one makes a rekey due.
  void rekey() {
    const std::uint8_t mode = in_.u8();
    RekeyFrame r;
    r.dev_id = provisioning().credentials.dev_id;
    const std::uint16_t other = in_.u16();
    r.sessctr = (mode & 1) != 0 ? other : device_.sessctr();
    const std::uint16_t back = in_.u16();
    const std::uint64_t next = device_.next_seq();
    r.seq = static_cast<std::uint32_t>(next > back ? next - back : back);
    if ((mode & 2) == 0) {
      r.proof = rekey_proof(r, edge_secret());
    } else {
      for (std::uint8_t& b : r.proof.mutable_view()) b = in_.u8();
    }
    Bytes wire = fuzz::encode_or_fail(r, encoding());
    fuzz::mutate(wire, in_);
    RekeyFrame got;
    if (decode_rekey(ByteView(wire), got) != Error::ok) return;
    const bool was_due = device_.rekey_due();
    const Error e = device_.handle_rekey(got, now_ms_);
    ++g_reached.rekey_outcomes[error_name(e)];
    if (e == Error::ok) {
      check(got.dev_id == provisioning().credentials.dev_id && got.sessctr == device_.sessctr(),
            "a REKEY for another device or session was accepted");
      check(acceptable_rekey_proof(got), "a REKEY with a forged proof was accepted");
      check(got.seq < device_.next_seq(), "a REKEY for a seq never sent was accepted");
      check(device_.rekey_due(), "an accepted REKEY made no rekey due");
    } else {
      check(device_.rekey_due() == was_due, "a refused REKEY changed rekey_due");
    }
  }

  Encoding encoding() { return (in_.u8() & 1) != 0 ? Encoding::compact : Encoding::json; }

  // ---- ACKs ----

  void edge_answers() {
    if (!device_.handshake_pending()) return;
    InitOutcome outcome;
    const Error e = edge_.handle_init(device_.current_init(), provisioning().secret, edge_state_,
                                      now_ms_, edge_rng_, outcome);
    if (e != Error::ok) return;
    // A new pending session replaces an unconfirmed one: the device's frames under the replaced
    // session are no longer expected to open (PROTOCOL.md 6.3, key confirmation).
    if (!outcome.retransmission && !confirmed_) device_keys_at_edge_ = false;
    // Every ACK the edge produced is kept (at most one per step): the authenticity check must
    // know them all.
    acks_.push_back(outcome.ack);
    Bytes wire = fuzz::encode_or_fail(outcome.ack, encoding());
    fuzz::mutate(wire, in_);
    deliver_ack(wire);
  }

  void replay_ack() {
    if (acks_.empty()) return;
    const AckFrame& ack = acks_[in_.u8() % acks_.size()];
    Bytes wire = fuzz::encode_or_fail(ack, encoding());
    fuzz::mutate(wire, in_);
    deliver_ack(wire);
  }

  // A genuine ACK with one field changed and a valid encoding: what an attacker would forge.
  void tamper_ack() {
    if (acks_.empty()) return;
    AckFrame ack = acks_[in_.u8() % acks_.size()];
    const std::uint8_t field = in_.u8();
    const std::uint8_t value = in_.u8();
    switch (field % 5) {
      case 0:
        ack.sessctr = static_cast<std::uint16_t>(ack.sessctr ^ (value | 1));
        break;
      case 1:
        ack.status = value;
        break;
      case 2:
        ack.edge_nonce.data()[value % kNonceSize] ^= 1u << (field >> 5);
        break;
      case 3:
        ack.proof.data()[value % kProofSize] ^= 1u << (field >> 5);
        break;
      default:
        (void)ack.dev_id.assign(value % 2 != 0 ? "esp32-02" : "esp32-0");
        break;
    }
    deliver_ack(fuzz::encode_or_fail(ack, encoding()));
  }

  void deliver_ack(const Bytes& wire) {
    AckFrame ack;
    if (decode_ack(ByteView(wire), ack) != Error::ok) return;
    if (const Error e = device_.handle_ack(ack); e != Error::ok) {
      ++g_reached.ack_refusals[error_name(e)];
      return;
    }
    ++g_reached.acks_accepted;
    bool genuine = false;
    for (const AckFrame& a : acks_) genuine = genuine || fuzz::same(a, ack);
    check(genuine, "the device accepted an ACK the edge never sent", fuzz::printable(wire));
    device_keys_at_edge_ = true;
    confirmed_ = false;
    last_down_seq_.reset();
  }

  // ---- uplink ----

  void seal() {
    const std::string reading = "{\"n\":" + std::to_string(++readings_) + "}";
    DataFrame frame;
    if (device_.seal(fuzz::view_of(reading), now_ms_, frame) != Error::ok) return;
    const Bytes wire = fuzz::encode_or_fail(frame, encoding());
    DataFrame received;
    check(decode_data(ByteView(wire), Direction::uplink, received) == Error::ok,
          "a sealed frame does not decode");
    Bytes plain(received.ciphertext.size());
    DataOutcome outcome;
    const Error e =
        edge_.open_data(received, edge_state_, now_ms_, MutableByteView(plain), outcome);
    if (device_keys_at_edge_) {
      ++g_reached.uplink_liveness_checks;
      check(e == Error::ok, "the edge cannot open a frame of the device's session", error_name(e));
    }
    if (e == Error::ok) {
      ++g_reached.frames_opened;
      check(Bytes(plain.begin(),
                  plain.begin() + static_cast<std::ptrdiff_t>(outcome.plaintext_size)) ==
                Bytes(reading.begin(), reading.end()),
            "the edge decrypted another plaintext");
      if (frame.sessctr == device_.sessctr()) confirmed_ = true;
      // The confirming frame is where the edge learns that the device stepped: from here on
      // both hold the same secret, and the old one is gone at the edge too (PROTOCOL.md 6.6).
      if (ratchet_mode_ && outcome.confirmed_session && frame.sessctr == device_.sessctr())
        check(outcome.ratcheted && edge_state_.ratchet.epoch == device_.epoch(),
              "the edge kept the old secret after the device's session was confirmed");
    }
  }

  // ---- downlink ----

  void downlink() {
    SealedDown down;
    const std::string text = "{\"cmd\":" + std::to_string(++commands_) + "}";
    down.plaintext.assign(text.begin(), text.end());
    if (edge_.seal_downlink(edge_state_, ByteView(down.plaintext), now_ms_, down.frame) !=
        Error::ok)
      return;
    if (downs_.size() >= kMaxHistory) return;
    downs_.push_back(down);
    Bytes wire = fuzz::encode_or_fail(down.frame, encoding());
    const bool mutated = fuzz::mutate(wire, in_);
    deliver_down(wire, downs_.size() - 1, !mutated);
  }

  void replay_down() {
    if (downs_.empty()) return;
    const std::size_t i = in_.u8() % downs_.size();
    Bytes wire = fuzz::encode_or_fail(downs_[i].frame, encoding());
    fuzz::mutate(wire, in_);
    deliver_down(wire, i, false);
  }

  // A genuine downlink frame with one header field or byte changed, validly encoded.
  void tamper_down() {
    if (downs_.empty()) return;
    const std::size_t i = in_.u8() % downs_.size();
    DataFrame f = downs_[i].frame;
    const std::uint8_t field = in_.u8();
    const std::uint32_t value = in_.u32();
    switch (field % 6) {
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
        f.tag.data()[value % kTagSize] ^= 1u << (field >> 5);
        break;
      case 4:
        f.iv.data()[value % kNonceSize] ^= 1u << (field >> 5);
        break;
      default:
        if (f.ciphertext.size() > 0) {
          Bytes ct(f.ciphertext.view().begin(), f.ciphertext.view().end());
          ct[value % ct.size()] ^= 1u << (field >> 5);
          (void)f.ciphertext.assign(ByteView(ct));
        }
        break;
    }
    deliver_down(fuzz::encode_or_fail(f, encoding()), i, false);
  }

  // `origin`: the sealed frame the bytes came from, if any; `pristine`: sent unmodified, once.
  void deliver_down(const Bytes& wire, std::optional<std::size_t> origin, bool pristine) {
    DataFrame frame;
    if (decode_data(ByteView(wire), Direction::downlink, frame) != Error::ok) return;
    Bytes plain(frame.ciphertext.size());
    std::size_t n = 0;
    const Error e = device_.open_downlink(frame, MutableByteView(plain), n);
    const bool expect_ok = pristine && confirmed_ && device_.established() &&
                           frame.sessctr == device_.sessctr() &&
                           (!last_down_seq_ || frame.seq > *last_down_seq_);
    if (expect_ok) {
      ++g_reached.downlink_liveness_checks;
      check(e == Error::ok, "the device refused a genuine in-order downlink frame", error_name(e));
    }
    if (e != Error::ok) {
      ++g_reached.downlink_refusals[error_name(e)];
      return;
    }
    ++g_reached.downlinks_opened;
    last_down_seq_ = frame.seq;
    std::optional<std::size_t> match;
    for (std::size_t i = 0; i < downs_.size() && !match; ++i) {
      if (fuzz::same(downs_[i].frame, frame, /*compare_iv=*/false)) match = i;
    }
    check(match.has_value(), "the device accepted a downlink frame the edge never sealed",
          fuzz::printable(wire));
    check(!origin || *origin == *match, "accepted frame is not the one delivered");
    SealedDown& d = downs_[*match];
    check(!d.accepted, "the device accepted a downlink frame twice (replay)");
    d.accepted = true;
    check(Bytes(plain.begin(), plain.begin() + static_cast<std::ptrdiff_t>(n)) == d.plaintext,
          "the device decrypted another downlink plaintext");
  }

  void clock() {
    const std::uint16_t amount = in_.u16();
    // Milliseconds, seconds or minutes: reaches retransmission, expiry and stale INITs.
    switch (amount % 3) {
      case 0:
        now_ms_ += amount;
        break;
      case 1:
        now_ms_ += std::uint64_t{amount} * 1000 / 64;
        break;
      default:
        now_ms_ += static_cast<std::uint64_t>(amount % 1024) * 60'000;
        break;
    }
    if (device_.retransmit_due(now_ms_)) (void)device_.note_init_sent(now_ms_, device_rng_);
    if (device_.handshake_expired(now_ms_)) {
      InitFrame init;
      (void)device_.start_handshake(now_s(), device_rng_, init);
    }
  }

  fuzz::ByteReader& in_;
  OpenSslCrypto& edge_crypto_;  // the edge's side of REKEY requests
  bool ratchet_mode_ = false;
  FuzzSecretStore store_;
  DeviceRatchet ratchet_{store_};
  std::vector<DevSecret> chain_;  // ratchet mode: S_0, S_1, ... as far as needed
  std::uint64_t now_ms_ = std::uint64_t{kStartS} * 1000;
  SeededRng device_rng_;
  SeededRng edge_rng_;
  DeviceSession device_;
  EdgeProtocol edge_;
  EdgeDeviceState edge_state_;
  std::vector<AckFrame> acks_;
  std::vector<SealedDown> downs_;
  bool device_keys_at_edge_ = false;  // the edge holds the device's current session
  bool confirmed_ = false;            // ...and a frame under it has confirmed it
  std::optional<std::uint32_t> last_down_seq_;
  std::uint64_t readings_ = 0;
  std::uint64_t commands_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static MbedtlsCrypto device_crypto;
  static OpenSslCrypto edge_crypto;
  fuzz::ByteReader in(ByteView(data, size));
  ++g_reached.inputs;
  Run(in, fuzz::input_seed(ByteView(data, size)), device_crypto, edge_crypto).run();
  return 0;
}
