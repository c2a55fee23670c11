// The golden trace of DSEKP v1 (docs/PROTOCOL.md, "Golden trace") computed on the target, under
// QEMU, from the trace's fixed inputs only. Every one of its values is printed as
// "GOLDEN <name> <value>" (hex, decimal, or the exact text for *_json and *_plaintext), and
// scripts/mcu/compare_golden.py compares them byte for byte with
// tests/vectors/golden_trace_v1.json.
//
// Who computes what, as in the host's tests/golden/golden_trace.cpp:
//  - the device's frames come from the SDK's C API (dsekp_device.h): one device sending JSON,
//    one sending compact frames, both with the scripted sessctr and DevNonce;
//  - the ACK and the downlink frame come from the core's EdgeProtocol (scripted EdgeNonce), the
//    edge opens the device's DATA frames, the devices open the edge's downlink frames;
//  - the key-schedule intermediates are re-derived from the spec's formulas with the backend's
//    primitives and must agree with what the frames prove (proofs, nonces, ciphertexts);
//  - the PSK baseline frame comes from psk_seal with the scripted IV;
//  - the ratchet's secrets (v1.2) from the formula, the core's step and an SDK device in ratchet
//    mode (dsekp_ratchet), which must store exactly dev_secret_1 at the golden ACK.
#include <array>
#include <cstring>

#include "crypto/mbedtls/mbedtls_crypto.hpp"
#include "dsekp/codec.hpp"
#include "dsekp/edge_session.hpp"
#include "dsekp/key_schedule.hpp"
#include "dsekp/psk_baseline.hpp"
#include "dsekp_device.h"
#include "golden_inputs.h"
#include "mcu_test.hpp"

namespace {

using dsekp::ByteView;
using dsekp::Error;
using dsekp::MutableByteView;
using mcu_test::bytes;
using mcu_test::check;

template <std::size_t N>
ByteView view(const std::uint8_t (&a)[N]) {
  return ByteView(a, N);
}
template <std::size_t N>
std::string_view text(const char (&s)[N]) {
  return std::string_view(s, N - 1);
}

void out_hex(std::string_view name, ByteView v) {
  mcu_test::line_begin("GOLDEN", name);
  mcu_test::put_hex(v);
  std::putchar('\n');
}
void out_text(std::string_view name, std::string_view v) {
  mcu_test::line_begin("GOLDEN", name);
  mcu_test::put(v);
  std::putchar('\n');
}
void out_dec(std::string_view name, std::uint64_t v) {
  mcu_test::line_begin("GOLDEN", name);
  mcu_test::put_u64(v);
  std::putchar('\n');
}

// A growing byte string in a fixed buffer, for transcripts built from the formulas.
struct Concat {
  std::array<std::uint8_t, 128> buf{};
  std::size_t n = 0;
  Concat& add(ByteView b) {
    for (std::uint8_t x : b) {
      if (n < buf.size()) buf[n] = x;
      ++n;
    }
    return *this;
  }
  Concat& be(std::uint64_t v, int width) {
    for (int i = width - 1; i >= 0; --i) {
      const std::uint8_t x = static_cast<std::uint8_t>(v >> (8 * i));
      add(ByteView(&x, 1));
    }
    return *this;
  }
  [[nodiscard]] ByteView view() const {
    check(n <= buf.size(), "transcript fits its buffer");
    return ByteView(buf.data(), n <= buf.size() ? n : buf.size());
  }
};

// One SDK device with its scripted randomness (sessctr, then DevNonce).
struct Device {
  std::array<std::uint8_t, 2> sessctr_be{};
  std::array<ByteView, 2> script_entries{};
  mcu_test::FixedScript script{nullptr, 0};
  dsekp_device dev{};

  bool init(dsekp_encoding encoding, dsekp_ratchet* ratchet = nullptr) {
    sessctr_be = {static_cast<std::uint8_t>(GOLDEN_SESSCTR >> 8),
                  static_cast<std::uint8_t>(GOLDEN_SESSCTR)};
    script_entries = {ByteView(sessctr_be), view(golden_dev_nonce)};
    script = mcu_test::FixedScript(script_entries.data(), script_entries.size());
    dsekp_device_params p{};
    p.dev_id = golden_dev_id;
    p.dev_secret = golden_dev_secret;
    p.edge_salt = golden_edge_salt;
    p.edge_salt_len = sizeof golden_edge_salt;
    p.encoding = encoding;
    p.random = &mcu_test::FixedScript::callback;
    p.random_user = &script;
    p.ratchet = ratchet;
    return dsekp_device_init(&dev, &p) == DSEKP_OK;
  }
};

// A ratcheting device's flash, in RAM: what the SDK's store callback was given.
struct RatchetFlash {
  std::array<std::uint8_t, 32> secret{};
  std::uint32_t epoch = 0;
  int writes = 0;
  static int store(void* user, const std::uint8_t* next, std::size_t len, std::uint32_t epoch) {
    auto* f = static_cast<RatchetFlash*>(user);
    if (len != f->secret.size()) return -1;
    std::memcpy(f->secret.data(), next, len);
    f->epoch = epoch;
    ++f->writes;
    return 0;
  }
};

// Storage outside main's frame: two SDK devices, the edge's per-device state and scratch frames.
Device g_json_device, g_compact_device, g_ratcheting_device;
RatchetFlash g_flash;
dsekp_ratchet g_ratchet;
dsekp::EdgeDeviceState g_edge_state;
dsekp::DataFrame g_frame, g_frame_compact;
std::array<std::uint8_t, dsekp::kMaxFrameSize> g_wire, g_wire2;
std::array<std::uint8_t, dsekp::kMaxPayloadSize> g_plain;

ByteView encoded(const auto& frame, dsekp::Encoding enc, std::array<std::uint8_t, 2048>& buf) {
  std::size_t n = 0;
  check(dsekp::encode(frame, enc, buf, n) == Error::ok, "encode");
  return ByteView(buf.data(), n);
}

}  // namespace

int main() {
  dsekp::MbedtlsCrypto crypto;  // intermediates and the edge
  check(crypto.ready(), "backend ready");

  dsekp::DevId dev_id;
  check(dev_id.assign(text(golden_dev_id)) == Error::ok, "dev_id");
  out_text("dev_id", text(golden_dev_id));
  out_hex("dev_secret", view(golden_dev_secret));
  out_hex("edge_salt", view(golden_edge_salt));
  out_dec("sessctr", GOLDEN_SESSCTR);
  out_dec("t", GOLDEN_T);
  out_hex("dev_nonce", view(golden_dev_nonce));
  out_hex("edge_nonce", view(golden_edge_nonce));

  // Key schedule from the formulas (PROTOCOL.md section 3).
  Concat id_prefixed;
  id_prefixed.be(dev_id.size(), 1).add(dev_id.view());
  Concat ikm;
  ikm.add(view(golden_dev_secret)).add(view(golden_dev_nonce)).be(GOLDEN_SESSCTR, 2);
  ikm.be(GOLDEN_T, 4);
  out_hex("ikm", ikm.view());
  std::array<std::uint8_t, 32> prk{}, ss{}, k_init{}, k_ack{}, ts{};
  std::array<std::uint8_t, 28> okm_up{}, okm_down{};
  const std::array<ByteView, 1> ikm_parts{ikm.view()};
  check(crypto.hkdf_extract(view(golden_edge_salt), ikm_parts, prk) == Error::ok, "PRK");
  out_hex("prk", prk);
  Concat session_info;
  session_info.add(bytes("DSEKP1 session")).add(id_prefixed.view());
  out_hex("session_info", session_info.view());
  auto expand = [&](ByteView key, ByteView info, MutableByteView out) {
    const std::array<ByteView, 1> parts{info};
    check(crypto.hkdf_expand(key, parts, out) == Error::ok, "HKDF-Expand");
  };
  expand(prk, session_info.view(), ss);
  out_hex("ss", ss);
  expand(ss, bytes("DSEKP1 init"), k_init);
  out_hex("k_init", k_init);
  expand(ss, bytes("DSEKP1 ack"), k_ack);
  out_hex("k_ack", k_ack);

  // INIT from the SDK, once per encoding.
  check(g_json_device.init(DSEKP_ENCODING_JSON), "JSON device init");
  check(g_compact_device.init(DSEKP_ENCODING_COMPACT), "compact device init");
  std::size_t init_json_len = 0, init_compact_len = 0;
  check(dsekp_device_begin_session(&g_json_device.dev, static_cast<std::uint32_t>(GOLDEN_T),
                                   g_wire.data(), g_wire.size(), &init_json_len) == DSEKP_OK,
        "begin_session (JSON)");
  check(dsekp_device_begin_session(&g_compact_device.dev, static_cast<std::uint32_t>(GOLDEN_T),
                                   g_wire2.data(), g_wire2.size(), &init_compact_len) == DSEKP_OK,
        "begin_session (compact)");
  const ByteView init_json(g_wire.data(), init_json_len);
  const ByteView init_compact(g_wire2.data(), init_compact_len);
  dsekp::InitFrame init, init2;
  check(dsekp::decode_init(init_json, init) == Error::ok, "decode INIT (JSON)");
  check(dsekp::decode_init(init_compact, init2) == Error::ok, "decode INIT (compact)");
  check(init.proof.equals(init2.proof), "both encodings carry the same INIT");

  Concat init_transcript;
  init_transcript.add(bytes("DSEKP1 INIT")).add(id_prefixed.view()).be(GOLDEN_SESSCTR, 2);
  init_transcript.be(GOLDEN_T, 4).add(view(golden_dev_nonce));
  out_hex("init_transcript", init_transcript.view());
  dsekp::Sha256Digest mac;
  const std::array<ByteView, 1> init_parts{init_transcript.view()};
  check(crypto.hmac_sha256(k_init, init_parts, mac) == Error::ok, "HMAC");
  check(mcu_test::equal(init.proof.view(), mac.view().first(16)), "INIT proof = formula");
  out_hex("init_proof", init.proof.view());
  out_text("init_json",
           std::string_view(reinterpret_cast<const char*>(init_json.data()), init_json.size()));
  out_hex("init_compact", init_compact);

  // ACK from the edge.
  dsekp::EdgeConfig config;
  check(config.edge_salt.assign(view(golden_edge_salt)) == Error::ok, "edge salt");
  dsekp::EdgeProtocol edge(crypto, config);
  const std::array<ByteView, 1> edge_script_entries{view(golden_edge_nonce)};
  mcu_test::FixedScript edge_script(edge_script_entries.data(), edge_script_entries.size());
  mcu_test::FixedScriptRng edge_rng(edge_script);
  dsekp::DevSecret secret;
  check(secret.assign(view(golden_dev_secret)), "secret");
  dsekp::InitOutcome outcome;
  check(
      edge.handle_init(init, secret, g_edge_state, GOLDEN_T * 1000, edge_rng, outcome) == Error::ok,
      "edge handle_init");
  Concat ack_transcript;
  ack_transcript.add(bytes("DSEKP1 ACK")).add(init.proof.view()).add(view(golden_edge_nonce));
  ack_transcript.be(0, 1);
  out_hex("ack_transcript", ack_transcript.view());
  const std::array<ByteView, 1> ack_parts{ack_transcript.view()};
  check(crypto.hmac_sha256(k_ack, ack_parts, mac) == Error::ok, "HMAC");
  check(mcu_test::equal(outcome.ack.proof.view(), mac.view().first(16)), "ACK proof = formula");
  out_hex("ack_proof", outcome.ack.proof.view());
  std::array<std::uint8_t, 2048> ack_json_buf{}, ack_compact_buf{};
  const ByteView ack_json = encoded(outcome.ack, dsekp::Encoding::json, ack_json_buf);
  const ByteView ack_compact = encoded(outcome.ack, dsekp::Encoding::compact, ack_compact_buf);
  out_text("ack_json",
           std::string_view(reinterpret_cast<const char*>(ack_json.data()), ack_json.size()));
  out_hex("ack_compact", ack_compact);
  check(dsekp_device_handle_ack(&g_json_device.dev, ack_json.data(), ack_json.size()) == DSEKP_OK,
        "SDK handle_ack (JSON)");
  check(dsekp_device_handle_ack(&g_compact_device.dev, ack_compact.data(), ack_compact.size()) ==
            DSEKP_OK,
        "SDK handle_ack (compact)");

  // Traffic keys from the formulas.
  const std::array<ByteView, 1> ss_parts{ByteView(ss)};
  check(crypto.hkdf_extract(view(golden_edge_nonce), ss_parts, ts) == Error::ok, "TS");
  out_hex("ts", ts);
  expand(ts, bytes("DSEKP1 up"), okm_up);
  expand(ts, bytes("DSEKP1 down"), okm_down);
  out_hex("k_up", ByteView(okm_up).first(16));
  out_hex("iv_up", ByteView(okm_up).subspan(16));
  out_hex("k_down", ByteView(okm_down).first(16));
  out_hex("iv_down", ByteView(okm_down).subspan(16));

  // The fields of a DATA or DOWN frame, the nonce and AAD from the formulas.
  auto frame_values = [&](std::string_view prefix, const dsekp::DataFrame& f, ByteView iv_base,
                          std::string_view label, ByteView plaintext, ByteView json,
                          ByteView compact) {
    char name[32];
    auto named = [&](std::string_view suffix) {
      std::size_t n = 0;
      for (char c : prefix) name[n++] = c;
      for (char c : suffix) name[n++] = c;
      return std::string_view(name, n);
    };
    std::array<std::uint8_t, 12> nonce{};
    for (std::size_t i = 0; i < 12; ++i) nonce[i] = iv_base[i];
    for (int i = 0; i < 8; ++i)
      nonce[4 + static_cast<std::size_t>(i)] ^=
          static_cast<std::uint8_t>(std::uint64_t{f.seq} >> (8 * (7 - i)));
    check(mcu_test::equal(nonce, f.iv.view()), "frame nonce = formula");
    Concat aad;
    aad.add(bytes(label)).add(id_prefixed.view()).be(GOLDEN_SESSCTR, 2).be(f.seq, 4);
    aad.be(f.sendts_ms, 8);
    out_text(named("_plaintext"),
             std::string_view(reinterpret_cast<const char*>(plaintext.data()), plaintext.size()));
    out_dec(named("_seq"), f.seq);
    out_dec(named("_sendts_ms"), f.sendts_ms);
    out_hex(named("_nonce"), nonce);
    out_hex(named("_aad"), aad.view());
    out_hex(named("_ciphertext"), f.ciphertext.view());
    out_hex(named("_tag"), f.tag.view());
    out_text(named("_json"),
             std::string_view(reinterpret_cast<const char*>(json.data()), json.size()));
    out_hex(named("_compact"), compact);
  };

  // DATA 0 and 1 from both SDK devices; the edge opens the JSON device's frames (the compact
  // device's must carry the same values).
  const std::uint64_t sendts[2] = {GOLDEN_DATA0_SENDTS_MS, GOLDEN_DATA1_SENDTS_MS};
  const ByteView reading = bytes(text(golden_data0_plaintext));
  for (int i = 0; i < 2; ++i) {
    std::size_t json_len = 0, compact_len = 0;
    check(dsekp_device_seal(&g_json_device.dev, reading.data(), reading.size(), sendts[i],
                            g_wire.data(), g_wire.size(), &json_len) == DSEKP_OK,
          "SDK seal (JSON)");
    check(dsekp_device_seal(&g_compact_device.dev, reading.data(), reading.size(), sendts[i],
                            g_wire2.data(), g_wire2.size(), &compact_len) == DSEKP_OK,
          "SDK seal (compact)");
    const ByteView json(g_wire.data(), json_len), compact(g_wire2.data(), compact_len);
    check(dsekp::decode_data(json, dsekp::Direction::uplink, g_frame) == Error::ok,
          "decode DATA (JSON)");
    check(dsekp::decode_data(compact, dsekp::Direction::uplink, g_frame_compact) == Error::ok,
          "decode DATA (compact)");
    check(mcu_test::equal(g_frame.ciphertext.view(), g_frame_compact.ciphertext.view()) &&
              g_frame.tag.equals(g_frame_compact.tag) && g_frame.seq == g_frame_compact.seq,
          "both encodings carry the same DATA frame");
    dsekp::DataOutcome opened;
    check(edge.open_data(g_frame, g_edge_state, sendts[i], g_plain, opened) == Error::ok,
          "edge open_data");
    const ByteView plain(g_plain.data(), opened.plaintext_size);
    check(mcu_test::equal(plain, reading), "edge recovers the reading");
    frame_values(i == 0 ? "data0" : "data1", g_frame, ByteView(okm_up).subspan(16), "DSEKP1 DATA",
                 plain, json, compact);
  }

  // One downlink frame from the edge; both SDK devices open it.
  const ByteView command = bytes(text(golden_down0_plaintext));
  check(edge.seal_downlink(g_edge_state, command, GOLDEN_DOWN0_SENDTS_MS, g_frame) == Error::ok,
        "edge seal_downlink");
  std::array<std::uint8_t, 2048> down_json_buf{}, down_compact_buf{};
  const ByteView down_json = encoded(g_frame, dsekp::Encoding::json, down_json_buf);
  const ByteView down_compact = encoded(g_frame, dsekp::Encoding::compact, down_compact_buf);
  std::size_t n_json = 0, n_compact = 0;
  std::array<std::uint8_t, 64> got_json{}, got_compact{};
  check(dsekp_device_open_downlink(&g_json_device.dev, down_json.data(), down_json.size(),
                                   got_json.data(), got_json.size(), &n_json) == DSEKP_OK,
        "SDK open_downlink (JSON)");
  check(dsekp_device_open_downlink(&g_compact_device.dev, down_compact.data(), down_compact.size(),
                                   got_compact.data(), got_compact.size(), &n_compact) == DSEKP_OK,
        "SDK open_downlink (compact)");
  check(mcu_test::equal(ByteView(got_compact.data(), n_compact), command),
        "compact device recovers the command");
  // A replayed downlink frame is refused.
  std::size_t n_replay = 0;
  check(dsekp_device_open_downlink(&g_json_device.dev, down_json.data(), down_json.size(),
                                   got_compact.data(), got_compact.size(),
                                   &n_replay) == DSEKP_ERR_REPLAY,
        "SDK refuses a replayed downlink");
  frame_values("down0", g_frame, ByteView(okm_down).subspan(16), "DSEKP1 DOWN",
               ByteView(got_json.data(), n_json), down_json, down_compact);

  // The PSK baseline frame.
  out_hex("psk_key", view(golden_psk_key));
  const std::array<ByteView, 1> psk_script_entries{view(golden_psk_iv)};
  mcu_test::FixedScript psk_script(psk_script_entries.data(), psk_script_entries.size());
  mcu_test::FixedScriptRng psk_rng(psk_script);
  dsekp::PskKey psk_key;
  check(psk_key.assign(view(golden_psk_key)), "psk key");
  dsekp::PskFrame psk;
  check(dsekp::psk_seal(crypto, psk_key, dev_id, 0, GOLDEN_DATA0_SENDTS_MS, reading, psk_rng,
                        psk) == Error::ok,
        "psk_seal");
  out_hex("psk_iv", psk.iv.view());
  out_hex("psk_ciphertext", psk.ciphertext.view());
  out_hex("psk_tag", psk.tag.view());
  std::array<std::uint8_t, 2048> psk_buf{};
  const ByteView psk_json = encoded(psk, dsekp::Encoding::json, psk_buf);
  out_text("psk_json",
           std::string_view(reinterpret_cast<const char*>(psk_json.data()), psk_json.size()));
  out_hex("psk_compact", encoded(psk, dsekp::Encoding::compact, psk_buf));

  // v1.1: the edge's REKEY request for the session, naming DATA seq 1; both SDK devices accept
  // it and then owe a new handshake.
  std::array<std::uint8_t, 32> rekey_prk{}, k_rekey{};
  const std::array<ByteView, 1> secret_parts{view(golden_dev_secret)};
  check(crypto.hkdf_extract(view(golden_edge_salt), secret_parts, rekey_prk) == Error::ok,
        "rekey PRK");
  out_hex("rekey_prk", rekey_prk);
  Concat rekey_info;
  rekey_info.add(bytes("DSEKP1 rekey")).add(id_prefixed.view());
  out_hex("rekey_info", rekey_info.view());
  expand(rekey_prk, rekey_info.view(), k_rekey);
  out_hex("k_rekey", k_rekey);
  constexpr std::uint32_t kRekeySeq = 1;
  out_dec("rekey_seq", kRekeySeq);
  Concat rekey_transcript;
  rekey_transcript.add(bytes("DSEKP1 REKEY")).add(id_prefixed.view()).be(GOLDEN_SESSCTR, 2);
  rekey_transcript.be(kRekeySeq, 4);
  out_hex("rekey_transcript", rekey_transcript.view());
  const std::array<ByteView, 1> rekey_parts{rekey_transcript.view()};
  check(crypto.hmac_sha256(k_rekey, rekey_parts, mac) == Error::ok, "HMAC");
  dsekp::ProofKey library_key;
  dsekp::RekeyFrame rekey;
  rekey.dev_id = dev_id;
  rekey.sessctr = GOLDEN_SESSCTR;
  rekey.seq = kRekeySeq;
  dsekp::EdgeSalt salt;
  check(salt.assign(view(golden_edge_salt)) == Error::ok, "edge salt");
  check(dsekp::derive_rekey_key(crypto, secret, salt, dev_id, library_key) == Error::ok,
        "derive_rekey_key");
  check(dsekp::compute_rekey_proof(crypto, library_key, dev_id, rekey.sessctr, rekey.seq,
                                   rekey.proof) == Error::ok,
        "compute_rekey_proof");
  check(mcu_test::equal(rekey.proof.view(), mac.view().first(16)), "REKEY proof = formula");
  out_hex("rekey_proof", rekey.proof.view());
  std::array<std::uint8_t, 2048> rekey_json_buf{}, rekey_compact_buf{};
  const ByteView rekey_json = encoded(rekey, dsekp::Encoding::json, rekey_json_buf);
  const ByteView rekey_compact = encoded(rekey, dsekp::Encoding::compact, rekey_compact_buf);
  out_text("rekey_json",
           std::string_view(reinterpret_cast<const char*>(rekey_json.data()), rekey_json.size()));
  out_hex("rekey_compact", rekey_compact);
  check(dsekp_device_handle_rekey(&g_json_device.dev, rekey_json.data(), rekey_json.size(), 1000) ==
            DSEKP_OK,
        "SDK handle_rekey (JSON)");
  check(dsekp_device_handle_rekey(&g_compact_device.dev, rekey_compact.data(), rekey_compact.size(),
                                  1000) == DSEKP_OK,
        "SDK handle_rekey (compact)");
  check(dsekp_device_rekey_due(&g_json_device.dev) == 1, "rekey due after the request");

  // v1.2: the ratchet (PROTOCOL.md 6.6), two steps from DEV_SECRET by the formula, each equal to
  // what the library's step gives.
  Concat ratchet_info;
  ratchet_info.add(bytes("DSEKP1 ratchet")).add(id_prefixed.view());
  out_hex("ratchet_info", ratchet_info.view());
  std::array<std::uint8_t, 32> secret_1{}, prk_1{}, secret_2{};
  expand(rekey_prk, ratchet_info.view(), secret_1);
  out_hex("dev_secret_1", secret_1);
  const std::array<ByteView, 1> secret_1_parts{ByteView(secret_1)};
  check(crypto.hkdf_extract(view(golden_edge_salt), secret_1_parts, prk_1) == Error::ok,
        "ratchet PRK");
  expand(prk_1, ratchet_info.view(), secret_2);
  out_hex("dev_secret_2", secret_2);
  dsekp::DevSecret stepped = secret.clone();
  for (const auto* expected : {&secret_1, &secret_2}) {
    check(dsekp::derive_next_secret(crypto, stepped, salt, dev_id, stepped) == Error::ok,
          "derive_next_secret");
    check(mcu_test::equal(stepped.view(), ByteView(*expected)), "ratchet step = formula");
  }
  // The SDK in ratchet mode: the golden session's ACK makes it store dev_secret_1, epoch 1,
  // before it takes the session.
  check(dsekp_ratchet_init(&g_ratchet, &RatchetFlash::store, &g_flash) == DSEKP_OK,
        "SDK ratchet init");
  check(g_ratcheting_device.init(DSEKP_ENCODING_JSON, &g_ratchet), "ratcheting device init");
  std::size_t ratcheting_init_len = 0;
  check(
      dsekp_device_begin_session(&g_ratcheting_device.dev, static_cast<std::uint32_t>(GOLDEN_T),
                                 g_wire2.data(), g_wire2.size(), &ratcheting_init_len) == DSEKP_OK,
      "begin_session (ratchet)");
  check(dsekp_device_handle_ack(&g_ratcheting_device.dev, ack_json.data(), ack_json.size()) ==
            DSEKP_OK,
        "SDK handle_ack (ratchet)");
  check(g_flash.writes == 1 && g_flash.epoch == 1 &&
            mcu_test::equal(ByteView(g_flash.secret), ByteView(secret_1)),
        "the SDK stored dev_secret_1 at epoch 1");
  check(dsekp_device_epoch(&g_ratcheting_device.dev) == 1, "SDK epoch 1");
  dsekp_device_wipe(&g_ratcheting_device.dev);
  dsekp_ratchet_wipe(&g_ratchet);

  dsekp_device_wipe(&g_json_device.dev);
  dsekp_device_wipe(&g_compact_device.dev);
  mcu_test::finish("GOLDEN");
}
