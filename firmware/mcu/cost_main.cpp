// Instruction counts of the device's protocol steps on the target, under QEMU with -icount
// (scripts/mcu/run-qemu.sh --icount; board.h says which counter and scripts/mcu/cost_report.py
// converts the raw units). Prints "COST <name> <raw>" per measurement:
//   calib_nop0 / calib_nop1000   the same measurement around 0 and 1000 `nop`s: their difference
//                                must convert to exactly 1000 instructions (checks the method)
//   overhead                     the measurement itself around an empty call (subtracted)
//   init_json / init_compact     dsekp_device_begin_session: RNG, key schedule, proof, encoding
//   ack_json / ack_compact       dsekp_device_handle_ack: decode, verify the ACK proof, derive the
//                                traffic keys, wipe the handshake keys
//   data_first_*                 the first dsekp_device_seal of a session (keys the AES-GCM state)
//   data_json / data_compact     a later dsekp_device_seal of the paper's 19-byte DHT11 reading
//   down_json / down_compact     dsekp_device_open_downlink of the golden 14-byte command
// and the primitives inside them (hkdf_handshake, init_proof, ack_proof, traffic_keys,
// hmac_40, gcm_seal_19), through the core's own functions on the same backend; and
//   ratchet_step                 what a device in ratchet mode (PROTOCOL.md 6.6) adds to an
//                                accepted ACK: DeviceRatchet::step, the next secret and K_rekey
//                                of the old one, with a store that keeps it in RAM (the flash
//                                write is the firmware's and not counted)
#include <array>

#include "board.h"
#include "crypto/mbedtls/mbedtls_crypto.hpp"
#include "dsekp/device_ratchet.hpp"
#include "dsekp/device_session.hpp"
#include "dsekp/key_schedule.hpp"
#include "dsekp_device.h"
#include "golden_inputs.h"
#include "mcu_test.hpp"

namespace {

using dsekp::ByteView;
using dsekp::Error;
using mcu_test::check;

void report(std::string_view name, std::uint32_t raw) {
  mcu_test::line_begin("COST", name);
  mcu_test::put_u64(raw);
  std::putchar('\n');
}

template <typename F>
__attribute__((noinline)) std::uint32_t measure(F&& f) {
  const std::uint32_t start = board_counter_read();
  f();
  const std::uint32_t end = board_counter_read();
  return board_counter_elapsed(start, end);
}

__attribute__((noinline)) void nop0() {
  __asm__ volatile("");
}
__attribute__((noinline)) void nop1000() {
  __asm__ volatile(".rept 1000\n\tnop\n\t.endr");
}

// Scripted randomness per device: sessctr, DevNonce, then 4 bytes of retransmission jitter.
struct Script {
  std::array<std::uint8_t, 2> sessctr{};
  std::array<std::uint8_t, 4> jitter{};
  std::array<ByteView, 3> entries{};
  mcu_test::FixedScript script{nullptr, 0};
  // Points the script at this object's own arrays (so it is set up in place, never copied).
  void reset() {
    sessctr = {static_cast<std::uint8_t>(GOLDEN_SESSCTR >> 8),
               static_cast<std::uint8_t>(GOLDEN_SESSCTR)};
    entries = {ByteView(sessctr), ByteView(golden_dev_nonce), ByteView(jitter)};
    script = mcu_test::FixedScript(entries.data(), entries.size());
  }
};

dsekp_device g_device;
Script g_script;
std::array<std::uint8_t, 512> g_out;
std::array<std::uint8_t, 64> g_plain;

// One full device session in one encoding, each step measured.
void session_costs(dsekp_encoding encoding, std::string_view suffix, ByteView ack, ByteView down) {
  g_script.reset();
  dsekp_device_params p{};
  p.dev_id = golden_dev_id;
  p.dev_secret = golden_dev_secret;
  p.edge_salt = golden_edge_salt;
  p.edge_salt_len = sizeof golden_edge_salt;
  p.encoding = encoding;
  p.random = &mcu_test::FixedScript::callback;
  p.random_user = &g_script.script;
  check(dsekp_device_init(&g_device, &p) == DSEKP_OK, "init");
  char name[32];
  auto named = [&](std::string_view base) {
    std::size_t n = 0;
    for (char c : base) name[n++] = c;
    for (char c : suffix) name[n++] = c;
    return std::string_view(name, n);
  };
  std::size_t n = 0;
  int rc = -1;
  report(named("init_"), measure([&] {
           rc = dsekp_device_begin_session(&g_device, static_cast<std::uint32_t>(GOLDEN_T),
                                           g_out.data(), g_out.size(), &n);
         }));
  check(rc == DSEKP_OK, "begin_session");
  check(dsekp_device_note_init_sent(&g_device, 0) == DSEKP_OK, "note_init_sent");
  report(named("ack_"),
         measure([&] { rc = dsekp_device_handle_ack(&g_device, ack.data(), ack.size()); }));
  check(rc == DSEKP_OK, "handle_ack");
  const ByteView reading(reinterpret_cast<const std::uint8_t*>(golden_data0_plaintext),
                         GOLDEN_DATA0_PLAINTEXT_LEN);
  report(named("data_first_"), measure([&] {
           rc = dsekp_device_seal(&g_device, reading.data(), reading.size(), GOLDEN_DATA0_SENDTS_MS,
                                  g_out.data(), g_out.size(), &n);
         }));
  check(rc == DSEKP_OK, "seal 0");
  report(named("data_"), measure([&] {
           rc = dsekp_device_seal(&g_device, reading.data(), reading.size(), GOLDEN_DATA1_SENDTS_MS,
                                  g_out.data(), g_out.size(), &n);
         }));
  check(rc == DSEKP_OK, "seal 1");
  report(named("down_"), measure([&] {
           rc = dsekp_device_open_downlink(&g_device, down.data(), down.size(), g_plain.data(),
                                           g_plain.size(), &n);
         }));
  check(rc == DSEKP_OK, "open_downlink");
  dsekp_device_wipe(&g_device);
}

void primitive_costs() {
  dsekp::MbedtlsCrypto crypto;
  check(crypto.ready(), "backend");
  dsekp::DevId dev_id;
  check(dev_id.assign(golden_dev_id) == Error::ok, "dev_id");
  dsekp::DevSecret secret;
  check(secret.assign(ByteView(golden_dev_secret)), "secret");
  dsekp::EdgeSalt salt;
  check(salt.assign(ByteView(golden_edge_salt)) == Error::ok, "salt");
  dsekp::InitParams init{&dev_id,
                         static_cast<std::uint16_t>(GOLDEN_SESSCTR),
                         static_cast<std::uint32_t>(GOLDEN_T),
                         {}};
  check(init.dev_nonce.assign(ByteView(golden_dev_nonce)), "nonce");
  dsekp::HandshakeKeys hk;
  dsekp::Proof proof, ack_proof;
  dsekp::EdgeNonce edge_nonce;
  check(edge_nonce.assign(ByteView(golden_edge_nonce)), "edge nonce");
  dsekp::TrafficKeys traffic;
  Error e = Error::ok;
  report("hkdf_handshake",
         measure([&] { e = dsekp::derive_handshake_keys(crypto, secret, salt, init, hk); }));
  check(e == Error::ok, "derive_handshake_keys");
  report("init_proof",
         measure([&] { e = dsekp::compute_init_proof(crypto, hk.k_init, init, proof); }));
  check(e == Error::ok, "compute_init_proof");
  report("ack_proof", measure([&] {
           e = dsekp::compute_ack_proof(crypto, hk.k_ack, proof, edge_nonce, 0, ack_proof);
         }));
  check(e == Error::ok, "compute_ack_proof");
  report("traffic_keys", measure([&] {
           e = dsekp::derive_traffic_keys(crypto, hk.session_secret, edge_nonce, traffic);
         }));
  check(e == Error::ok, "derive_traffic_keys");
  std::array<std::uint8_t, 40> msg{};
  dsekp::Sha256Digest mac;
  const std::array<ByteView, 1> parts{ByteView(msg)};
  report("hmac_40",
         measure([&] { e = crypto.hmac_sha256(ByteView(hk.k_ack.view()), parts, mac); }));
  check(e == Error::ok, "hmac");
  std::array<std::uint8_t, 19> pt{}, ct{};
  dsekp::AeadTag tag;
  const dsekp::AeadNonce nonce = dsekp::make_nonce(traffic.up.iv_base, 1);
  const ByteView key(traffic.up.key.view());
  check(crypto.aes128_gcm_seal(key, nonce, {}, pt, ct, tag) == Error::ok, "gcm warm-up");
  report("gcm_seal_19", measure([&] { e = crypto.aes128_gcm_seal(key, nonce, {}, pt, ct, tag); }));
  check(e == Error::ok, "gcm_seal");

  struct RamStore final : dsekp::SecretStore {
    bool store_secret(const dsekp::DevSecret& s, std::uint32_t) noexcept override {
      stored = s.clone();
      return true;
    }
    dsekp::DevSecret stored;
  } store;
  dsekp::DeviceRatchet ratchet(store);
  dsekp::DeviceCredentials credentials{dev_id, secret.clone(), salt, 0};
  report("ratchet_step", measure([&] { e = ratchet.step(crypto, credentials); }));
  check(e == Error::ok && credentials.epoch == 1, "ratchet step");
}

}  // namespace

int main() {
  board_counter_start();
  mcu_test::put("COST_UNIT ");
  mcu_test::put(board_counter_unit());
  std::putchar('\n');
  report("calib_nop0", measure([] { nop0(); }));
  report("calib_nop1000", measure([] { nop1000(); }));
  report("overhead", measure([] {}));

  session_costs(
      DSEKP_ENCODING_JSON, "json",
      ByteView(reinterpret_cast<const std::uint8_t*>(golden_ack_json), GOLDEN_ACK_JSON_LEN),
      ByteView(reinterpret_cast<const std::uint8_t*>(golden_down0_json), GOLDEN_DOWN0_JSON_LEN));
  session_costs(DSEKP_ENCODING_COMPACT, "compact", ByteView(golden_ack_compact),
                ByteView(golden_down0_compact));
  primitive_costs();
  mcu_test::finish("COST");
}
