// Golden trace computation (see golden_trace.hpp). The fixed inputs are chosen to be easy to type
// into another implementation: counting byte patterns and round numbers.
#include "golden_trace.hpp"

#include <array>
#include <cstdio>
#include <numeric>
#include <stdexcept>

#include "crypto/testing/seeded_rng.hpp"
#include "dsekp/codec.hpp"
#include "dsekp/device_session.hpp"
#include "dsekp/edge_session.hpp"
#include "dsekp/key_schedule.hpp"
#include "dsekp/psk_baseline.hpp"

namespace dsekp::golden {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes counting(std::uint8_t first, std::size_t n) {
  Bytes b(n);
  std::iota(b.begin(), b.end(), first);
  return b;
}

Bytes text_bytes(std::string_view s) {
  return Bytes(s.begin(), s.end());
}

std::string hex(ByteView b) {
  std::string out;
  char buf[3];
  for (std::uint8_t x : b) {
    std::snprintf(buf, sizeof buf, "%02x", x);
    out += buf;
  }
  return out;
}

void require(Error e, const char* what) {
  if (e != Error::ok) throw std::runtime_error(std::string(what) + ": " + error_name(e));
}
void require(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("inconsistent: ") + what);
}

Bytes encoded(const auto& frame, Encoding enc) {
  Bytes buf(kMaxFrameSize);
  std::size_t n = 0;
  require(encode(frame, enc, buf, n), "encode");
  buf.resize(n);
  return buf;
}

Bytes concat(std::initializer_list<ByteView> parts) {
  Bytes out;
  for (ByteView p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

Bytes be(std::uint64_t v, int width) {
  Bytes out(static_cast<std::size_t>(width));
  for (int i = 0; i < width; ++i)
    out[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v >> (8 * (width - 1 - i)));
  return out;
}

// Fixed inputs.
const std::string kDevId = "esp32-01";
constexpr std::uint16_t kSessctr = 0x1234;
constexpr std::uint32_t kT = 1'764'460'800;  // 2025-11-30T00:00:00Z
const Bytes kDevSecret = counting(0x00, 32);
const Bytes kEdgeSalt = counting(0xa0, 16);
const Bytes kDevNonce = counting(0xb0, 12);
const Bytes kEdgeNonce = counting(0xc0, 12);
const Bytes kPskKey = counting(0xd0, 16);
const Bytes kPskIv = counting(0xe0, 12);
const std::string kReading = R"({"t":24.0,"h":51.0})";
const std::string kCommand = R"({"relay":"on"})";
constexpr std::uint64_t kSendTs0 = 1'764'460'800'123;
constexpr std::uint64_t kSendTs1 = 1'764'460'802'123;
constexpr std::uint64_t kDownTs = 1'764'460'803'000;

}  // namespace

Trace compute_golden_trace(CryptoBackend& crypto) {
  Trace trace;
  const auto put = [&](const std::string& name, ByteView v) { trace.emplace_back(name, hex(v)); };
  const auto put_text = [&](const std::string& name, const std::string& v) {
    trace.emplace_back(name, v);
  };

  DeviceCredentials credentials;
  require(credentials.dev_id.assign(kDevId), "dev_id");
  require(credentials.dev_secret.assign(kDevSecret), "dev_secret");
  require(credentials.edge_salt.assign(kEdgeSalt), "edge_salt");

  put_text("dev_id", kDevId);
  put("dev_secret", kDevSecret);
  put("edge_salt", kEdgeSalt);
  put_text("sessctr", std::to_string(kSessctr));
  put_text("t", std::to_string(kT));
  put("dev_nonce", kDevNonce);
  put("edge_nonce", kEdgeNonce);

  // Key schedule, from the formulas (independently of key_schedule.cpp).
  const Bytes id_prefixed = concat({be(kDevId.size(), 1), text_bytes(kDevId)});
  const Bytes ikm = concat({kDevSecret, kDevNonce, be(kSessctr, 2), be(kT, 4)});
  put("ikm", ikm);
  Bytes prk(32), ss(32), k_init(32), k_ack(32), ts(32), okm_up(28), okm_down(28);
  const std::array<ByteView, 1> ikm_parts{ByteView(ikm)};
  require(crypto.hkdf_extract(kEdgeSalt, ikm_parts, prk), "extract");
  put("prk", prk);
  const Bytes session_info = concat({text_bytes("DSEKP1 session"), id_prefixed});
  put("session_info", session_info);
  const auto expand = [&](ByteView key, const Bytes& info, Bytes& out) {
    const std::array<ByteView, 1> parts{ByteView(info)};
    require(crypto.hkdf_expand(key, parts, out), "expand");
  };
  expand(prk, session_info, ss);
  put("ss", ss);
  expand(ss, text_bytes("DSEKP1 init"), k_init);
  put("k_init", k_init);
  expand(ss, text_bytes("DSEKP1 ack"), k_ack);
  put("k_ack", k_ack);

  // INIT from the real device, with scripted randomness: sessctr (2 bytes), then dev_nonce.
  ScriptedRng device_rng({be(kSessctr, 2), kDevNonce});
  DeviceSession device(crypto, credentials);
  InitFrame init;
  require(device.start_handshake(kT, device_rng, init), "start_handshake");
  const Bytes init_transcript =
      concat({text_bytes("DSEKP1 INIT"), id_prefixed, be(kSessctr, 2), be(kT, 4), kDevNonce});
  put("init_transcript", init_transcript);
  Sha256Digest mac;
  const std::array<ByteView, 1> init_parts{ByteView(init_transcript)};
  require(crypto.hmac_sha256(k_init, init_parts, mac), "hmac");
  require(init.proof.view().size() == 16 &&
              std::equal(init.proof.view().begin(), init.proof.view().end(), mac.view().begin()),
          "init proof");
  put("init_proof", init.proof.view());
  const Bytes init_json = encoded(init, Encoding::json);
  put_text("init_json", std::string(init_json.begin(), init_json.end()));
  put("init_compact", encoded(init, Encoding::compact));

  // ACK from the real edge, with the scripted edge nonce.
  EdgeConfig config;
  config.edge_salt = credentials.edge_salt;
  EdgeProtocol edge(crypto, config);
  EdgeDeviceState state;
  ScriptedRng edge_rng({kEdgeNonce});
  InitOutcome outcome;
  require(edge.handle_init(init, credentials.dev_secret, state, std::uint64_t{kT} * 1000, edge_rng,
                           outcome),
          "handle_init");
  const AckFrame& ack = outcome.ack;
  const Bytes ack_transcript =
      concat({text_bytes("DSEKP1 ACK"), init.proof.view(), kEdgeNonce, be(0, 1)});
  put("ack_transcript", ack_transcript);
  const std::array<ByteView, 1> ack_parts{ByteView(ack_transcript)};
  require(crypto.hmac_sha256(k_ack, ack_parts, mac), "hmac");
  require(std::equal(ack.proof.view().begin(), ack.proof.view().end(), mac.view().begin()),
          "ack proof");
  put("ack_proof", ack.proof.view());
  const Bytes ack_json = encoded(ack, Encoding::json);
  put_text("ack_json", std::string(ack_json.begin(), ack_json.end()));
  put("ack_compact", encoded(ack, Encoding::compact));
  require(device.handle_ack(ack), "handle_ack");

  // Traffic keys.
  const std::array<ByteView, 1> ss_parts{ByteView(ss)};
  require(crypto.hkdf_extract(kEdgeNonce, ss_parts, ts), "extract ts");
  put("ts", ts);
  expand(ts, text_bytes("DSEKP1 up"), okm_up);
  expand(ts, text_bytes("DSEKP1 down"), okm_down);
  put("k_up", ByteView(okm_up).first(16));
  put("iv_up", ByteView(okm_up).subspan(16));
  put("k_down", ByteView(okm_down).first(16));
  put("iv_down", ByteView(okm_down).subspan(16));

  // DATA frames 0 and 1 from the device; the edge must open them.
  const auto data = [&](const std::string& prefix, const DataFrame& f, const std::string& text,
                        ByteView iv_base) {
    Bytes nonce(iv_base.begin(), iv_base.end());
    const Bytes seq_be = be(f.seq, 8);
    for (int i = 0; i < 8; ++i)
      nonce[4 + static_cast<std::size_t>(i)] ^= seq_be[static_cast<std::size_t>(i)];
    require(std::equal(nonce.begin(), nonce.end(), f.iv.view().begin()), "nonce");
    const std::string label = f.direction == Direction::uplink ? "DSEKP1 DATA" : "DSEKP1 DOWN";
    put_text(prefix + "_plaintext", text);
    put_text(prefix + "_seq", std::to_string(f.seq));
    put_text(prefix + "_sendts_ms", std::to_string(f.sendts_ms));
    put(prefix + "_nonce", nonce);
    put(prefix + "_aad", concat({text_bytes(label), id_prefixed, be(kSessctr, 2), be(f.seq, 4),
                                 be(f.sendts_ms, 8)}));
    put(prefix + "_ciphertext", f.ciphertext.view());
    put(prefix + "_tag", f.tag.view());
    const Bytes json = encoded(f, Encoding::json);
    put_text(prefix + "_json", std::string(json.begin(), json.end()));
    put(prefix + "_compact", encoded(f, Encoding::compact));
  };
  Bytes plaintext(kMaxPayloadSize);
  for (std::uint64_t sendts : {kSendTs0, kSendTs1}) {
    DataFrame f;
    require(device.seal(text_bytes(kReading), sendts, f), "seal");
    data("data" + std::to_string(f.seq), f, kReading, ByteView(okm_up).subspan(16));
    DataOutcome opened;
    require(edge.open_data(f, state, sendts, plaintext, opened), "open_data");
    require(std::string(plaintext.begin(), plaintext.begin() + opened.plaintext_size) == kReading,
            "data plaintext");
  }

  // One downlink frame from the edge; the device must open it.
  DataFrame down;
  require(edge.seal_downlink(state, text_bytes(kCommand), kDownTs, down), "seal_downlink");
  data("down0", down, kCommand, ByteView(okm_down).subspan(16));
  std::size_t n = 0;
  require(device.open_downlink(down, plaintext, n), "open_downlink");

  // The PSK baseline frame (random IV scripted).
  put("psk_key", kPskKey);
  ScriptedRng psk_rng({kPskIv});
  PskFrame psk;
  PskKey psk_key;
  require(psk_key.assign(kPskKey), "psk_key");
  require(psk_seal(crypto, psk_key, credentials.dev_id, 0, kSendTs0, text_bytes(kReading), psk_rng,
                   psk),
          "psk_seal");
  put("psk_iv", psk.iv.view());
  put("psk_ciphertext", psk.ciphertext.view());
  put("psk_tag", psk.tag.view());
  const Bytes psk_json = encoded(psk, Encoding::json);
  put_text("psk_json", std::string(psk_json.begin(), psk_json.end()));
  put("psk_compact", encoded(psk, Encoding::compact));

  // v1.1: the edge has lost the session and answers the DATA frame with seq 1 with a REKEY
  // request; the device must accept it (and then owe a new handshake).
  Bytes rekey_prk(32), k_rekey(32);
  const std::array<ByteView, 1> secret_parts{ByteView(kDevSecret)};
  require(crypto.hkdf_extract(kEdgeSalt, secret_parts, rekey_prk), "extract rekey");
  put("rekey_prk", rekey_prk);
  const Bytes rekey_info = concat({text_bytes("DSEKP1 rekey"), id_prefixed});
  put("rekey_info", rekey_info);
  expand(rekey_prk, rekey_info, k_rekey);
  put("k_rekey", k_rekey);
  constexpr std::uint32_t kRekeySeq = 1;
  put_text("rekey_seq", std::to_string(kRekeySeq));
  const Bytes rekey_transcript =
      concat({text_bytes("DSEKP1 REKEY"), id_prefixed, be(kSessctr, 2), be(kRekeySeq, 4)});
  put("rekey_transcript", rekey_transcript);
  const std::array<ByteView, 1> rekey_parts{ByteView(rekey_transcript)};
  require(crypto.hmac_sha256(k_rekey, rekey_parts, mac), "hmac");
  // The library's derivation must give the same request as the formulas.
  ProofKey library_key;
  RekeyFrame rekey;
  rekey.dev_id = credentials.dev_id;
  rekey.sessctr = kSessctr;
  rekey.seq = kRekeySeq;
  require(derive_rekey_key(crypto, credentials.dev_secret, credentials.edge_salt,
                           credentials.dev_id, library_key),
          "derive_rekey_key");
  require(
      compute_rekey_proof(crypto, library_key, rekey.dev_id, rekey.sessctr, rekey.seq, rekey.proof),
      "compute_rekey_proof");
  require(std::equal(rekey.proof.view().begin(), rekey.proof.view().end(), mac.view().begin()),
          "rekey proof");
  put("rekey_proof", rekey.proof.view());
  const Bytes rekey_json = encoded(rekey, Encoding::json);
  put_text("rekey_json", std::string(rekey_json.begin(), rekey_json.end()));
  put("rekey_compact", encoded(rekey, Encoding::compact));
  require(device.handle_rekey(rekey, kDownTs), "handle_rekey");
  require(device.rekey_due(), "rekey due after the request");

  // v1.2: the ratchet (PROTOCOL.md 6.6). The secret after one and two steps; the first step
  // shares its extraction with K_rekey.
  const Bytes ratchet_info = concat({text_bytes("DSEKP1 ratchet"), id_prefixed});
  put("ratchet_info", ratchet_info);
  Bytes secret_1(32), prk_1(32), secret_2(32);
  expand(rekey_prk, ratchet_info, secret_1);
  put("dev_secret_1", secret_1);
  const std::array<ByteView, 1> secret_1_parts{ByteView(secret_1)};
  require(crypto.hkdf_extract(kEdgeSalt, secret_1_parts, prk_1), "extract ratchet");
  expand(prk_1, ratchet_info, secret_2);
  put("dev_secret_2", secret_2);
  DevSecret stepped = credentials.dev_secret.clone();
  for (const Bytes* expected : {&secret_1, &secret_2}) {
    require(derive_next_secret(crypto, stepped, credentials.edge_salt, credentials.dev_id, stepped),
            "derive_next_secret");
    require(std::equal(stepped.view().begin(), stepped.view().end(), expected->begin()),
            "ratchet step");
  }
  return trace;
}

}  // namespace dsekp::golden
