// Host tests of the device SDK's C API (firmware/include/dsekp_device.h) and its client driver
// (dsekp_client.h): the golden trace through the C API, a session against the real edge
// (EdgeProtocol on OpenSSL), every argument and protocol error the API documents, and the
// driver's handshake, retransmission, confirmation, expiry, clockless counter and publish-failure
// paths. The same SDK sources are cross-built and run under QEMU by the mcu.* tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "crypto/openssl/openssl_crypto.hpp"
#include "dsekp/codec.hpp"
#include "dsekp/edge_session.hpp"
#include "dsekp_client.h"
#include "dsekp_device.h"

extern "C" int dsekp_sdk_c_smoke(void);  // sdk_c_usage.c

namespace {

using Bytes = std::vector<std::uint8_t>;

const nlohmann::json& golden() {
  static const nlohmann::json trace = [] {
    std::ifstream in(std::string(DSEKP_TEST_DATA_DIR) + "/golden_trace_v1.json");
    return nlohmann::json::parse(in)["trace"];
  }();
  return trace;
}
std::string g(const char* name) {
  return golden()[name].get<std::string>();
}
Bytes hex(const std::string& h) {
  Bytes out(h.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<std::uint8_t>(std::stoul(h.substr(2 * i, 2), nullptr, 16));
  return out;
}
Bytes text(const std::string& s) {
  return Bytes(s.begin(), s.end());
}
std::string as_text(const std::uint8_t* p, std::size_t n) {
  return std::string(reinterpret_cast<const char*>(p), n);
}

// NOT CRYPTOGRAPHIC: scripted randomness for the C callback. Entries are consumed in order and
// must match the requested length; after the script, requests get zeros (jitter) if `pad`.
struct Script {
  std::vector<Bytes> entries;
  std::size_t next = 0;
  bool pad_with_zeros = true;
  bool fail = false;
  static int fill(void* user, std::uint8_t* out, std::size_t len) {
    auto* s = static_cast<Script*>(user);
    if (s->fail) return -1;
    if (s->next < s->entries.size()) {
      if (s->entries[s->next].size() != len) return -1;
      std::memcpy(out, s->entries[s->next++].data(), len);
      return 0;
    }
    if (!s->pad_with_zeros) return -1;
    std::memset(out, 0, len);
    return 0;
  }
};

Script golden_script() {
  return Script{{hex("1234"), hex(g("dev_nonce"))}};
}

struct Material {
  std::string dev_id = g("dev_id");
  Bytes secret = hex(g("dev_secret"));
  Bytes salt = hex(g("edge_salt"));
};

dsekp_device_params params_for(const Material& m, Script& script,
                               dsekp_encoding enc = DSEKP_ENCODING_JSON) {
  dsekp_device_params p{};
  p.dev_id = m.dev_id.c_str();
  p.dev_secret = m.secret.data();
  p.edge_salt = m.salt.data();
  p.edge_salt_len = m.salt.size();
  p.encoding = enc;
  p.random = &Script::fill;
  p.random_user = &script;
  return p;
}

// The edge side of a session on OpenSSL, for the tests that take the device through a real edge.
struct RealEdge {
  explicit RealEdge(const Material& material)
      : salt_ok(config.edge_salt.assign(material.salt) == dsekp::Error::ok),
        secret_ok(secret.assign(material.secret)),
        protocol(crypto, config) {}

  dsekp::OpenSslCrypto crypto;
  dsekp::OpenSslRng rng;
  dsekp::EdgeConfig config;
  dsekp::DevSecret secret;
  bool salt_ok;
  bool secret_ok;
  dsekp::EdgeProtocol protocol;
  dsekp::EdgeDeviceState state;
};

// The real edge's ACK (JSON) to the INIT that `dev` begins at `now_s` (Unix seconds).
void edge_ack_to_new_init(dsekp_device& dev, RealEdge& edge, std::uint32_t now_s, Bytes& ack) {
  ASSERT_TRUE(edge.salt_ok && edge.secret_ok);
  std::uint8_t out[2048];
  std::size_t n = 0;
  ASSERT_EQ(dsekp_device_begin_session(&dev, now_s, out, sizeof out, &n), DSEKP_OK);
  dsekp::InitFrame init;
  ASSERT_EQ(dsekp::decode_init(dsekp::ByteView(out, n), init), dsekp::Error::ok);
  dsekp::InitOutcome outcome;
  ASSERT_EQ(edge.protocol.handle_init(init, edge.secret, edge.state, std::uint64_t{now_s} * 1000,
                                      edge.rng, outcome),
            dsekp::Error::ok);
  ack.resize(512);
  ASSERT_EQ(dsekp::encode(outcome.ack, dsekp::Encoding::json, ack, n), dsekp::Error::ok);
  ack.resize(n);
}

class DeviceApi : public ::testing::Test {
 protected:
  void SetUp() override {
    script = golden_script();
    params = params_for(material, script);
    ASSERT_EQ(dsekp_device_init(&dev, &params), DSEKP_OK);
  }
  void TearDown() override { dsekp_device_wipe(&dev); }

  std::string begin() {
    std::size_t n = 0;
    EXPECT_EQ(dsekp_device_begin_session(&dev, static_cast<std::uint32_t>(std::stoul(g("t"))), out,
                                         sizeof out, &n),
              DSEKP_OK);
    return as_text(out, n);
  }
  int ack(const std::string& wire) {
    return dsekp_device_handle_ack(&dev, reinterpret_cast<const std::uint8_t*>(wire.data()),
                                   wire.size());
  }
  static constexpr std::size_t kOut = 2048;
  int seal(const std::string& plaintext, std::uint64_t ts, std::string& frame,
           std::size_t cap = kOut) {
    std::size_t n = 0;
    const int rc = dsekp_device_seal(&dev, reinterpret_cast<const std::uint8_t*>(plaintext.data()),
                                     plaintext.size(), ts, out, cap, &n);
    frame = rc == DSEKP_OK ? as_text(out, n) : std::string();
    return rc;
  }

  // INIT -> ACK between `dev` and `edge` at `now_s` (Unix seconds).
  void handshake_with(RealEdge& edge, std::uint32_t now_s) {
    Bytes ack;
    ASSERT_NO_FATAL_FAILURE(edge_ack_to_new_init(dev, edge, now_s, ack));
    ASSERT_EQ(dsekp_device_handle_ack(&dev, ack.data(), ack.size()), DSEKP_OK);
  }

  Material material;
  Script script;
  dsekp_device_params params{};
  dsekp_device dev{};
  std::uint8_t out[kOut]{};
};

TEST_F(DeviceApi, GoldenTraceThroughTheCApi) {
  EXPECT_EQ(begin(), g("init_json"));
  EXPECT_EQ(dsekp_device_handshake_pending(&dev), 1);
  EXPECT_EQ(ack(g("ack_json")), DSEKP_OK);
  EXPECT_EQ(dsekp_device_established(&dev), 1);
  EXPECT_EQ(dsekp_device_confirmation_pending(&dev), 1);
  EXPECT_EQ(dsekp_device_sessctr(&dev), 0x1234);
  std::string frame;
  ASSERT_EQ(seal(g("data0_plaintext"), std::stoull(g("data0_sendts_ms")), frame), DSEKP_OK);
  EXPECT_EQ(frame, g("data0_json"));
  EXPECT_EQ(dsekp_device_confirmation_pending(&dev), 0);
  ASSERT_EQ(seal(g("data1_plaintext"), std::stoull(g("data1_sendts_ms")), frame), DSEKP_OK);
  EXPECT_EQ(frame, g("data1_json"));
  EXPECT_EQ(dsekp_device_next_seq(&dev), 2u);
  const std::string down = g("down0_json");
  std::uint8_t plain[64];
  std::size_t n = 0;
  ASSERT_EQ(dsekp_device_open_downlink(&dev, reinterpret_cast<const std::uint8_t*>(down.data()),
                                       down.size(), plain, sizeof plain, &n),
            DSEKP_OK);
  EXPECT_EQ(as_text(plain, n), g("down0_plaintext"));
  EXPECT_EQ(dsekp_device_open_downlink(&dev, reinterpret_cast<const std::uint8_t*>(down.data()),
                                       down.size(), plain, sizeof plain, &n),
            DSEKP_ERR_REPLAY);
  EXPECT_EQ(n, 0u);
}

TEST_F(DeviceApi, GoldenTraceInTheCompactEncoding) {
  dsekp_device_wipe(&dev);
  script = golden_script();
  params = params_for(material, script, DSEKP_ENCODING_COMPACT);
  ASSERT_EQ(dsekp_device_init(&dev, &params), DSEKP_OK);
  std::size_t n = 0;
  ASSERT_EQ(dsekp_device_begin_session(&dev, static_cast<std::uint32_t>(std::stoul(g("t"))), out,
                                       sizeof out, &n),
            DSEKP_OK);
  EXPECT_EQ(Bytes(out, out + n), hex(g("init_compact")));
  const Bytes ack_compact = hex(g("ack_compact"));
  ASSERT_EQ(dsekp_device_handle_ack(&dev, ack_compact.data(), ack_compact.size()), DSEKP_OK);
  const std::string reading = g("data0_plaintext");
  ASSERT_EQ(
      dsekp_device_seal(&dev, reinterpret_cast<const std::uint8_t*>(reading.data()), reading.size(),
                        std::stoull(g("data0_sendts_ms")), out, sizeof out, &n),
      DSEKP_OK);
  EXPECT_EQ(Bytes(out, out + n), hex(g("data0_compact")));
  const Bytes down = hex(g("down0_compact"));
  std::uint8_t plain[64];
  ASSERT_EQ(dsekp_device_open_downlink(&dev, down.data(), down.size(), plain, sizeof plain, &n),
            DSEKP_OK);
  EXPECT_EQ(as_text(plain, n), g("down0_plaintext"));
}

TEST_F(DeviceApi, CurrentInitIsTheSameBytesForRetransmission) {
  std::size_t n = 0;
  EXPECT_EQ(dsekp_device_current_init(&dev, out, sizeof out, &n), DSEKP_ERR_NO_PENDING_HANDSHAKE);
  const std::string first = begin();
  ASSERT_EQ(dsekp_device_current_init(&dev, out, sizeof out, &n), DSEKP_OK);
  EXPECT_EQ(as_text(out, n), first);
  EXPECT_EQ(dsekp_device_retransmit_due(&dev, 0), 1);
  ASSERT_EQ(dsekp_device_note_init_sent(&dev, 1000), DSEKP_OK);
  // Backoff 1 s, jitter from zeros: next send at 1000 + 500.
  EXPECT_EQ(dsekp_device_retransmit_due(&dev, 1499), 0);
  EXPECT_EQ(dsekp_device_retransmit_due(&dev, 1500), 1);
  EXPECT_EQ(dsekp_device_handshake_expired(&dev, 1000 + 119'999), 0);
  EXPECT_EQ(dsekp_device_handshake_expired(&dev, 1000 + 120'000), 1);
}

TEST_F(DeviceApi, SessionWithTheRealEdgeOnOpenSsl) {
  RealEdge edge(material);
  const std::uint32_t now_s = 1'800'000'000;
  ASSERT_NO_FATAL_FAILURE(handshake_with(edge, now_s));

  for (int i = 0; i < 3; ++i) {
    const std::string reading = "{\"t\":2" + std::to_string(i) + ".0,\"h\":40.0}";
    std::string frame;
    ASSERT_EQ(seal(reading, std::uint64_t{now_s} * 1000 + i, frame), DSEKP_OK);
    dsekp::DataFrame data;
    ASSERT_EQ(dsekp::decode_data(text(frame), dsekp::Direction::uplink, data), dsekp::Error::ok);
    std::uint8_t plain[64];
    dsekp::DataOutcome opened;
    ASSERT_EQ(
        edge.protocol.open_data(data, edge.state, std::uint64_t{now_s} * 1000 + i, plain, opened),
        dsekp::Error::ok);
    EXPECT_EQ(as_text(plain, opened.plaintext_size), reading);
  }
  dsekp::DataFrame down;
  const std::string command = "{\"led\":1}";
  ASSERT_EQ(
      edge.protocol.seal_downlink(edge.state, text(command), std::uint64_t{now_s} * 1000 + 5, down),
      dsekp::Error::ok);
  std::uint8_t wire[2048];
  std::size_t n = 0;
  ASSERT_EQ(dsekp::encode(down, dsekp::Encoding::compact, wire, n), dsekp::Error::ok);
  std::uint8_t plain[64];
  std::size_t m = 0;
  ASSERT_EQ(dsekp_device_open_downlink(&dev, wire, n, plain, sizeof plain, &m), DSEKP_OK);
  EXPECT_EQ(as_text(plain, m), command);
}

// The SDK seals into the tail of the caller's frame buffer and opens in the caller's plaintext
// buffer, with one cached GCM key: full-size payloads in buffers of exactly the documented size,
// both encodings, uplink and downlink alternating (each switch re-keys), all opened by the edge.
TEST_F(DeviceApi, FullSizeFramesInExactBuffersBothWaysWithTheRealEdge) {
  for (const dsekp_encoding encoding : {DSEKP_ENCODING_JSON, DSEKP_ENCODING_COMPACT}) {
    dsekp_device_wipe(&dev);
    script = golden_script();
    params = params_for(material, script, encoding);
    ASSERT_EQ(dsekp_device_init(&dev, &params), DSEKP_OK);
    RealEdge edge(material);
    const std::uint32_t now_s = 1'800'000'000;
    const std::uint64_t now_ms = std::uint64_t{now_s} * 1000;
    ASSERT_NO_FATAL_FAILURE(handshake_with(edge, now_s));
    std::uint8_t wire[2048];
    std::size_t n = 0;

    for (const std::size_t len : {std::size_t{DSEKP_MAX_PAYLOAD_SIZE}, std::size_t{0},
                                  std::size_t{47}, std::size_t{DSEKP_MAX_PAYLOAD_SIZE - 1}}) {
      std::vector<std::uint8_t> reading(len);
      for (std::size_t i = 0; i < len; ++i) reading[i] = static_cast<std::uint8_t>(i * 7 + 1);
      std::vector<std::uint8_t> frame(dsekp_device_max_frame_size(len));
      ASSERT_EQ(
          dsekp_device_seal(&dev, reading.data(), len, now_ms, frame.data(), frame.size(), &n),
          DSEKP_OK)
          << len;
      dsekp::DataFrame data;
      ASSERT_EQ(
          dsekp::decode_data(dsekp::ByteView(frame.data(), n), dsekp::Direction::uplink, data),
          dsekp::Error::ok);
      std::vector<std::uint8_t> plain(DSEKP_MAX_PAYLOAD_SIZE);
      dsekp::DataOutcome opened;
      ASSERT_EQ(edge.protocol.open_data(data, edge.state, now_ms, plain, opened), dsekp::Error::ok)
          << len;
      EXPECT_EQ(std::vector<std::uint8_t>(plain.begin(), plain.begin() + opened.plaintext_size),
                reading);

      dsekp::DataFrame down;
      ASSERT_EQ(edge.protocol.seal_downlink(edge.state, reading, now_ms, down), dsekp::Error::ok);
      const auto enc =
          encoding == DSEKP_ENCODING_JSON ? dsekp::Encoding::json : dsekp::Encoding::compact;
      ASSERT_EQ(dsekp::encode(down, enc, wire, n), dsekp::Error::ok);
      std::vector<std::uint8_t> command(len);  // exactly the ciphertext's size
      std::size_t m = 99;
      ASSERT_EQ(dsekp_device_open_downlink(&dev, wire, n, command.data(), command.size(), &m),
                DSEKP_OK)
          << len;
      EXPECT_EQ(m, len);
      EXPECT_EQ(command, reading);
    }
  }
}

// The buffers the SDK works in must be the caller's own and distinct: overlaps are refused before
// anything is consumed, and a downlink that fails leaves nothing in the plaintext buffer.
TEST_F(DeviceApi, OverlappingBuffersAreRefusedAndAFailedOpenLeavesNothing) {
  begin();
  ASSERT_EQ(ack(g("ack_json")), DSEKP_OK);
  std::size_t n = 0;
  // The reading inside the frame buffer (as if sealed in place).
  std::memcpy(out, "{\"t\":21}", 8);
  EXPECT_EQ(dsekp_device_seal(&dev, out, 8, 1, out, sizeof out, &n), DSEKP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dsekp_device_seal(&dev, out + sizeof out - 8, 8, 1, out, sizeof out, &n),
            DSEKP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dsekp_device_next_seq(&dev), 0u);  // no seq consumed
  std::string frame;
  ASSERT_EQ(seal(g("data0_plaintext"), std::stoull(g("data0_sendts_ms")), frame), DSEKP_OK);
  EXPECT_EQ(frame, g("data0_json"));

  // A downlink decoded into its own message buffer.
  std::string down = g("down0_json");
  std::vector<std::uint8_t> msg(down.begin(), down.end());
  std::size_t m = 7;
  EXPECT_EQ(dsekp_device_open_downlink(&dev, msg.data(), msg.size(), msg.data() + 10, 64, &m),
            DSEKP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(m, 7u);  // untouched: refused before anything was done
  // A forged tag: the ciphertext was decoded into `plain` and decrypted there; all of it is wiped.
  const std::size_t tag_at = down.find("\"tag\":\"") + 7;
  down[tag_at] = down[tag_at] == 'A' ? 'B' : 'A';
  std::uint8_t plain[64];
  std::memset(plain, 0x5a, sizeof plain);
  EXPECT_EQ(dsekp_device_open_downlink(&dev, reinterpret_cast<const std::uint8_t*>(down.data()),
                                       down.size(), plain, sizeof plain, &m),
            DSEKP_ERR_AUTH_FAILED);
  EXPECT_EQ(m, 0u);
  EXPECT_EQ(std::count(std::begin(plain), std::end(plain), 0), 64);
  // The genuine frame still opens afterwards (the forged one moved no window).
  const std::string genuine = g("down0_json");
  ASSERT_EQ(dsekp_device_open_downlink(&dev, reinterpret_cast<const std::uint8_t*>(genuine.data()),
                                       genuine.size(), plain, sizeof plain, &m),
            DSEKP_OK);
  EXPECT_EQ(as_text(plain, m), g("down0_plaintext"));
}

// Downlinks above the protocol's payload cap, in a plaintext buffer large enough to hold them:
// the cap is the protocol's, not the buffer's (an attacker on the broker sends these), and
// nothing is left in the buffer.
TEST_F(DeviceApi, OversizedDownlinksAreRefusedWhateverTheBuffer) {
  begin();
  ASSERT_EQ(ack(g("ack_json")), DSEKP_OK);
  // Base64 of n zero bytes.
  const auto zeros_b64 = [](std::size_t n) {
    std::string s(n / 3 * 4, 'A');
    if (n % 3 == 1) s += "AA==";
    if (n % 3 == 2) s += "AAA=";
    return s;
  };
  const auto json_down = [&](std::size_t ct_len) {
    return R"({"seq":1,"dev_id":"esp32-01","sessctr_id":4660,"ciphertext":")" + zeros_b64(ct_len) +
           R"(","iv":"AAAAAAAAAAAAAAAA","tag":"AAAAAAAAAAAAAAAAAAAAAA==","sendts_ms":1})";
  };
  std::string compact_1025 =
      "\x04\x08"
      "esp32-01";
  compact_1025 += std::string("\x12\x34\0\0\0\x01\0\0\0\0\0\0\0\x01", 14);
  compact_1025 += std::string(1025 + 16, '\0');
  const std::pair<std::string, int> cases[] = {
      {json_down(1025), DSEKP_ERR_PAYLOAD_TOO_LARGE},
      {json_down(1026), DSEKP_ERR_PAYLOAD_TOO_LARGE},
      {json_down(1029), DSEKP_ERR_PAYLOAD_TOO_LARGE},
      {compact_1025, DSEKP_ERR_PAYLOAD_TOO_LARGE},
      {"{" + std::string(2047, ' ') + "}", DSEKP_ERR_FRAME_TOO_LARGE},
  };
  std::vector<std::uint8_t> plain(4096);
  for (const auto& [wire, expected] : cases) {
    std::fill(plain.begin(), plain.end(), 0x5a);
    std::size_t m = 99;
    EXPECT_EQ(dsekp_device_open_downlink(&dev, reinterpret_cast<const std::uint8_t*>(wire.data()),
                                         wire.size(), plain.data(), plain.size(), &m),
              expected)
        << wire.size();
    EXPECT_EQ(m, 0u);
    EXPECT_EQ(std::count(plain.begin(), plain.end(), 0), static_cast<long>(plain.size()));
  }
  // The session is untouched: the genuine downlink still opens.
  const std::string genuine = g("down0_json");
  std::size_t m = 0;
  ASSERT_EQ(dsekp_device_open_downlink(&dev, reinterpret_cast<const std::uint8_t*>(genuine.data()),
                                       genuine.size(), plain.data(), plain.size(), &m),
            DSEKP_OK);
  EXPECT_EQ(as_text(plain.data(), m), g("down0_plaintext"));
}

TEST_F(DeviceApi, ProtocolErrorsAreNamedAndChangeNothing) {
  std::string frame;
  EXPECT_EQ(seal("x", 1, frame), DSEKP_ERR_NO_SESSION);
  EXPECT_EQ(ack(g("ack_json")), DSEKP_ERR_NO_PENDING_HANDSHAKE);
  begin();
  std::string forged = g("ack_json");
  const std::size_t at = forged.find("\"proof\":\"") + 9;
  forged[at] = forged[at] == 'A' ? 'B' : 'A';
  EXPECT_EQ(ack(forged), DSEKP_ERR_BAD_ACK_PROOF);
  EXPECT_EQ(dsekp_device_handshake_pending(&dev), 1);
  EXPECT_EQ(dsekp_device_established(&dev), 0);
  std::string other = g("ack_json");
  other.replace(other.find("esp32-01"), 8, "esp32-02");
  EXPECT_EQ(ack(other), DSEKP_ERR_ACK_MISMATCH);
  EXPECT_EQ(ack("{not json"), DSEKP_ERR_JSON_SYNTAX);
  EXPECT_EQ(ack(""), DSEKP_ERR_FRAME_EMPTY);
  EXPECT_EQ(ack(g("ack_json")), DSEKP_OK);  // the genuine ACK still works afterwards
  EXPECT_STREQ(dsekp_device_error_name(DSEKP_ERR_BAD_ACK_PROOF), "bad_ack_proof");
}

TEST_F(DeviceApi, ArgumentErrors) {
  std::size_t n = 0;
  EXPECT_EQ(dsekp_device_begin_session(nullptr, 1, out, sizeof out, &n),
            DSEKP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dsekp_device_begin_session(&dev, 1, nullptr, sizeof out, &n),
            DSEKP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dsekp_device_handle_ack(&dev, nullptr, 5), DSEKP_ERR_INVALID_ARGUMENT);
  begin();
  ASSERT_EQ(ack(g("ack_json")), DSEKP_OK);
  // An output buffer below max_frame_size is refused before the seq is consumed.
  std::string frame;
  const std::size_t need = dsekp_device_max_frame_size(19);
  EXPECT_EQ(seal(g("data0_plaintext"), 1, frame, need - 1), DSEKP_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(dsekp_device_next_seq(&dev), 0u);
  EXPECT_EQ(seal(g("data0_plaintext"), 1, frame, need), DSEKP_OK);
  const std::string big(DSEKP_MAX_PAYLOAD_SIZE + 1, 'x');
  EXPECT_EQ(seal(big, 1, frame), DSEKP_ERR_PAYLOAD_TOO_LARGE);
  EXPECT_EQ(dsekp_device_seal(&dev, nullptr, 3, 1, out, sizeof out, &n),
            DSEKP_ERR_INVALID_ARGUMENT);
  // An empty reading is a valid frame (session confirmation).
  EXPECT_EQ(dsekp_device_seal(&dev, nullptr, 0, 1, out, sizeof out, &n), DSEKP_OK);
  // Downlink into a buffer smaller than the ciphertext.
  std::uint8_t small[4];
  const std::string down = g("down0_json");
  EXPECT_EQ(dsekp_device_open_downlink(&dev, reinterpret_cast<const std::uint8_t*>(down.data()),
                                       down.size(), small, sizeof small, &n),
            DSEKP_ERR_BUFFER_TOO_SMALL);
  EXPECT_STREQ(dsekp_device_error_name(-1), "unknown_status");
  EXPECT_STREQ(dsekp_device_error_name(DSEKP_ERROR_COUNT), "unknown_status");
  for (int code = 0; code < DSEKP_ERROR_COUNT; ++code) {
    EXPECT_STRNE(dsekp_device_error_name(code), "unknown_status") << code;
  }
}

TEST(DeviceApiInit, RefusesBadMaterialAndUninitialisedStorage) {
  Material m;
  Script script = golden_script();
  dsekp_device dev{};
  std::size_t n = 0;
  std::uint8_t out[256];
  // Never initialised: every call refuses.
  EXPECT_EQ(dsekp_device_begin_session(&dev, 1, out, sizeof out, &n), DSEKP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dsekp_device_established(&dev), 0);
  EXPECT_EQ(dsekp_device_topic(&dev, DSEKP_TOPIC_ACK, reinterpret_cast<char*>(out), sizeof out),
            0u);
  dsekp_device_params p = params_for(m, script);
  p.random = nullptr;
  EXPECT_EQ(dsekp_device_init(&dev, &p), DSEKP_ERR_INVALID_ARGUMENT);
  p = params_for(m, script);
  p.dev_id = "bad id!";
  EXPECT_EQ(dsekp_device_init(&dev, &p), DSEKP_ERR_BAD_DEV_ID);
  const std::string long_id(65, 'a');
  p.dev_id = long_id.c_str();
  EXPECT_EQ(dsekp_device_init(&dev, &p), DSEKP_ERR_BAD_DEV_ID);
  p = params_for(m, script);
  p.edge_salt_len = 15;
  EXPECT_EQ(dsekp_device_init(&dev, &p), DSEKP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dsekp_device_init(nullptr, &p), DSEKP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dsekp_device_begin_session(&dev, 1, out, sizeof out, &n), DSEKP_ERR_INVALID_ARGUMENT);
  // A failing random source fails the handshake, and nothing is pending.
  p = params_for(m, script);
  ASSERT_EQ(dsekp_device_init(&dev, &p), DSEKP_OK);
  script.fail = true;
  EXPECT_EQ(dsekp_device_begin_session(&dev, 1, out, sizeof out, &n), DSEKP_ERR_CRYPTO_FAILURE);
  EXPECT_EQ(dsekp_device_handshake_pending(&dev), 0);
  // Wiping leaves zeros and an unusable object.
  dsekp_device_wipe(&dev);
  for (unsigned char b : dev.opaque.bytes) ASSERT_EQ(b, 0);
  EXPECT_EQ(dsekp_device_note_init_sent(&dev, 0), DSEKP_ERR_INVALID_ARGUMENT);
  EXPECT_LE(dsekp_device_state_size(), sizeof(dsekp_device));
  std::printf("dsekp_device_state_size() = %zu, sizeof(dsekp_device) = %zu\n",
              dsekp_device_state_size(), sizeof(dsekp_device));
}

// Ratchet mode through the C API (PROTOCOL.md 6.6): the firmware's store callback gets every
// next secret and epoch before the session starts, a store that fails refuses the ACK and
// changes nothing (the retransmitted INIT brings the same ACK, which the device then takes), a
// device booted from what the store holds carries on with the real edge, and its old secret
// opens none of its later sessions' keys at the edge.
struct Flash {
  Bytes secret;
  std::uint32_t epoch = 0;
  int writes = 0;
  bool fail = false;
  static int store(void* user, const std::uint8_t* secret, std::size_t len, std::uint32_t epoch) {
    auto* f = static_cast<Flash*>(user);
    if (f->fail || len != 32) return -1;
    f->secret.assign(secret, secret + len);
    f->epoch = epoch;
    ++f->writes;
    return 0;
  }
};

TEST(DeviceApiRatchet, TheStoreGetsEachNextSecretAndARebootCarriesOnWithTheEdge) {
  const Material material;
  Flash flash{material.secret};
  RealEdge edge(material);
  ASSERT_TRUE(edge.salt_ok && edge.secret_ok);
  dsekp::DevId id;
  ASSERT_EQ(id.assign(material.dev_id), dsekp::Error::ok);
  ASSERT_TRUE(dsekp::enable_ratchet(edge.state, id, edge.secret));

  std::uint32_t now_s = 1'800'000'000;
  for (int boot = 0; boot < 3; ++boot) {
    dsekp_ratchet ratchet{};
    ASSERT_EQ(dsekp_ratchet_init(&ratchet, &Flash::store, &flash), DSEKP_OK);
    Script script{{}, 0, true};
    std::vector<std::uint8_t> nonce(12, static_cast<std::uint8_t>(boot + 1));
    script.entries = {Bytes{0x10, static_cast<std::uint8_t>(boot)}, nonce};
    dsekp_device_params p = params_for(material, script);
    const Bytes booted_secret = flash.secret;
    p.dev_secret = booted_secret.data();
    p.ratchet = &ratchet;
    p.epoch = flash.epoch;
    dsekp_device dev{};
    ASSERT_EQ(dsekp_device_init(&dev, &p), DSEKP_OK);
    EXPECT_EQ(dsekp_device_epoch(&dev), static_cast<std::uint32_t>(boot));

    now_s += 10;
    Bytes ack_bytes;
    ASSERT_NO_FATAL_FAILURE(edge_ack_to_new_init(dev, edge, now_s, ack_bytes));
    const std::uint8_t* ack = ack_bytes.data();
    const std::size_t ack_len = ack_bytes.size();
    std::uint8_t out[2048];
    std::size_t n = 0;
    // The first boot's store fails once: the ACK is refused and nothing moves.
    flash.fail = boot == 0;
    if (flash.fail) {
      EXPECT_EQ(dsekp_device_handle_ack(&dev, ack, ack_len), DSEKP_ERR_SECRET_STORE_FAILED);
      EXPECT_EQ(std::string(dsekp_device_error_name(DSEKP_ERR_SECRET_STORE_FAILED)),
                "secret_store_failed");
      EXPECT_FALSE(dsekp_device_established(&dev));
      EXPECT_EQ(dsekp_device_epoch(&dev), 0u);
      EXPECT_EQ(flash.writes, 0);
      flash.fail = false;
    }
    ASSERT_EQ(dsekp_device_handle_ack(&dev, ack, ack_len), DSEKP_OK);
    EXPECT_EQ(flash.epoch, static_cast<std::uint32_t>(boot + 1));
    EXPECT_EQ(flash.writes, boot + 1);
    EXPECT_NE(flash.secret, booted_secret) << "a new secret, not the booted one";
    EXPECT_EQ(dsekp_device_epoch(&dev), static_cast<std::uint32_t>(boot + 1));

    // The confirming frame: the edge steps too and holds what the flash holds.
    const std::string reading = "{\"t\":21.5}";
    ASSERT_EQ(dsekp_device_seal(&dev, reinterpret_cast<const std::uint8_t*>(reading.data()),
                                reading.size(), std::uint64_t{now_s} * 1000, out, sizeof out, &n),
              DSEKP_OK);
    dsekp::DataFrame data;
    ASSERT_EQ(dsekp::decode_data(dsekp::ByteView(out, n), dsekp::Direction::uplink, data),
              dsekp::Error::ok);
    std::uint8_t plain[64];
    dsekp::DataOutcome opened;
    ASSERT_EQ(edge.protocol.open_data(data, edge.state, std::uint64_t{now_s} * 1000, plain, opened),
              dsekp::Error::ok);
    EXPECT_TRUE(opened.ratcheted);
    EXPECT_EQ(edge.state.ratchet.epoch, flash.epoch);
    EXPECT_EQ(
        Bytes(edge.state.ratchet.secret.view().begin(), edge.state.ratchet.secret.view().end()),
        flash.secret);
    dsekp_device_wipe(&dev);
    dsekp_ratchet_wipe(&ratchet);
  }

  // Refusals: a ratchet that was never set up, an epoch without a ratchet, a null store.
  Script script = golden_script();
  dsekp_device_params p = params_for(material, script);
  dsekp_ratchet never{};
  p.ratchet = &never;
  dsekp_device dev{};
  EXPECT_EQ(dsekp_device_init(&dev, &p), DSEKP_ERR_INVALID_ARGUMENT);
  p.ratchet = nullptr;
  p.epoch = 3;
  EXPECT_EQ(dsekp_device_init(&dev, &p), DSEKP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dsekp_ratchet_init(&never, nullptr, nullptr), DSEKP_ERR_INVALID_ARGUMENT);
}

TEST_F(DeviceApi, Topics) {
  char buf[DSEKP_TOPIC_MAX];
  EXPECT_EQ(dsekp_device_topic(&dev, DSEKP_TOPIC_INIT, buf, sizeof buf), 10u);
  EXPECT_STREQ(buf, "dsekp/init");
  EXPECT_GT(dsekp_device_topic(&dev, DSEKP_TOPIC_ACK, buf, sizeof buf), 0u);
  EXPECT_STREQ(buf, "dsekp/init/ack/esp32-01");
  EXPECT_GT(dsekp_device_topic(&dev, DSEKP_TOPIC_DATA, buf, sizeof buf), 0u);
  EXPECT_STREQ(buf, "dsekp/data");
  EXPECT_GT(dsekp_device_topic(&dev, DSEKP_TOPIC_DOWN, buf, sizeof buf), 0u);
  EXPECT_STREQ(buf, "dsekp/down/esp32-01");
  EXPECT_EQ(dsekp_device_topic(&dev, DSEKP_TOPIC_DOWN, buf, 19), 0u);  // 19 chars + NUL needed
  EXPECT_EQ(dsekp_device_topic(&dev, DSEKP_TOPIC_DOWN, buf, 20), 19u);
  EXPECT_GT(dsekp_device_topic(&dev, DSEKP_TOPIC_REKEY, buf, sizeof buf), 0u);
  EXPECT_STREQ(buf, "dsekp/rekey/esp32-01");
}

TEST(DeviceApiTopics, PerDeviceUplinkTopicsNameTheDevice) {
  Material material;
  Script script;
  dsekp_device_params params = params_for(material, script);
  params.per_device_topics = 1;
  dsekp_device dev{};
  ASSERT_EQ(dsekp_device_init(&dev, &params), DSEKP_OK);
  char buf[DSEKP_TOPIC_MAX];
  EXPECT_EQ(dsekp_device_topic(&dev, DSEKP_TOPIC_INIT, buf, sizeof buf), 19u);
  EXPECT_STREQ(buf, "dsekp/init/esp32-01");
  EXPECT_GT(dsekp_device_topic(&dev, DSEKP_TOPIC_DATA, buf, sizeof buf), 0u);
  EXPECT_STREQ(buf, "dsekp/data/esp32-01");
  EXPECT_GT(dsekp_device_topic(&dev, DSEKP_TOPIC_ACK, buf, sizeof buf), 0u);
  EXPECT_STREQ(buf, "dsekp/init/ack/esp32-01");
  dsekp_device_wipe(&dev);
}

// The deployment's topic prefix (`dsekp keys topic-prefix`, the header's DSEKP_TOPIC_PREFIX) goes
// in front of every topic, up to the longest topic the client's buffers hold; a prefix the broker
// would read as a wildcard, or one too long, is refused at init.
TEST(DeviceApiTopics, TheTopicPrefixIsInFrontOfEveryTopic) {
  Material material;
  Script script;
  dsekp_device_params params = params_for(material, script);
  params.per_device_topics = 1;
  params.topic_prefix = "site1/";
  dsekp_device dev{};
  ASSERT_EQ(dsekp_device_init(&dev, &params), DSEKP_OK);
  char buf[DSEKP_TOPIC_MAX];
  EXPECT_EQ(dsekp_device_topic(&dev, DSEKP_TOPIC_INIT, buf, sizeof buf), 25u);
  EXPECT_STREQ(buf, "site1/dsekp/init/esp32-01");
  EXPECT_GT(dsekp_device_topic(&dev, DSEKP_TOPIC_ACK, buf, sizeof buf), 0u);
  EXPECT_STREQ(buf, "site1/dsekp/init/ack/esp32-01");
  EXPECT_GT(dsekp_device_topic(&dev, DSEKP_TOPIC_REKEY, buf, sizeof buf), 0u);
  EXPECT_STREQ(buf, "site1/dsekp/rekey/esp32-01");
  dsekp_device_wipe(&dev);

  const std::string longest(DSEKP_TOPIC_PREFIX_MAX, 'p');
  const std::string id(64, 'd');
  params.dev_id = id.c_str();
  params.topic_prefix = longest.c_str();
  ASSERT_EQ(dsekp_device_init(&dev, &params), DSEKP_OK);
  EXPECT_EQ(dsekp_device_topic(&dev, DSEKP_TOPIC_ACK, buf, sizeof buf), sizeof buf - 1)
      << "the longest topic fills DSEKP_TOPIC_MAX exactly";
  dsekp_device_wipe(&dev);
  const std::string too_long(DSEKP_TOPIC_PREFIX_MAX + 1, 'p');
  for (const char* bad : {too_long.c_str(), "site/+/", "site#", "a b/"}) {
    params.topic_prefix = bad;
    EXPECT_EQ(dsekp_device_init(&dev, &params), DSEKP_ERR_INVALID_ARGUMENT) << bad;
  }
}

TEST(DeviceApiC, UsableFromC) {
  EXPECT_EQ(dsekp_sdk_c_smoke(), 0);
}

// --- the client driver ------------------------------------------------------------------------

struct Broker {
  std::vector<std::pair<std::string, std::string>> published;
  bool fail = false;
  std::uint64_t mono = 0, wall = 0;
  std::uint32_t counter = 0;
  bool counter_store_fails = false;
  static int publish(void* u, const char* topic, const std::uint8_t* p, std::size_t n) {
    auto* b = static_cast<Broker*>(u);
    if (b->fail) return -1;
    b->published.emplace_back(topic, as_text(p, n));
    return 0;
  }
  static std::uint64_t monotonic(void* u) { return static_cast<Broker*>(u)->mono; }
  static std::uint64_t unix_ms(void* u) { return static_cast<Broker*>(u)->wall; }
  static int load(void* u, std::uint32_t* v) {
    *v = static_cast<Broker*>(u)->counter;
    return 0;
  }
  static int store(void* u, std::uint32_t v) {
    auto* b = static_cast<Broker*>(u);
    if (b->counter_store_fails) return -1;
    b->counter = v;
    return 0;
  }
  dsekp_client_io io() {
    return dsekp_client_io{this, &publish, &monotonic, &unix_ms, &load, &store};
  }
};

constexpr std::uint64_t kBootedMs = 1000;

class ClientDriver : public ::testing::Test {
 protected:
  void SetUp() override {
    script = golden_script();
    params = params_for(material, script);
    // Up for a second: a clocked device's first INIT after a boot waits for that (dsekp_client.c).
    broker.mono = kBootedMs;
    io = broker.io();
    ASSERT_EQ(dsekp_client_init(&client, &params, &io, tx, sizeof tx), DSEKP_OK);
  }
  void TearDown() override { dsekp_client_wipe(&client); }
  int deliver(dsekp_topic topic, const std::string& payload, std::string* downlink = nullptr) {
    std::uint8_t plain[256];
    std::size_t n = 0;
    const int rc = dsekp_client_on_message(&client, dsekp_client_topic(&client, topic),
                                           reinterpret_cast<const std::uint8_t*>(payload.data()),
                                           payload.size(), plain, sizeof plain, &n);
    if (downlink) *downlink = as_text(plain, n);
    return rc;
  }

  Material material;
  Script script;
  dsekp_device_params params{};
  Broker broker;
  dsekp_client_io io{};
  dsekp_client client{};
  std::uint8_t tx[1024]{};
};

TEST_F(ClientDriver, FullSessionMatchesTheGoldenTrace) {
  EXPECT_EQ(dsekp_client_poll(&client), DSEKP_OK);
  EXPECT_TRUE(broker.published.empty()) << "no wall clock yet: no handshake";
  broker.wall = std::stoull(g("t")) * 1000;
  ASSERT_EQ(dsekp_client_poll(&client), DSEKP_OK);
  ASSERT_EQ(broker.published.size(), 1u);
  EXPECT_EQ(broker.published[0].first, "dsekp/init");
  EXPECT_EQ(broker.published[0].second, g("init_json"));
  // Retransmission: same bytes once the backoff (1 s, jitter from zeros: 500 ms) has passed.
  broker.mono = kBootedMs + 499;
  ASSERT_EQ(dsekp_client_poll(&client), DSEKP_OK);
  EXPECT_EQ(broker.published.size(), 1u);
  broker.mono = kBootedMs + 500;
  ASSERT_EQ(dsekp_client_poll(&client), DSEKP_OK);
  ASSERT_EQ(broker.published.size(), 2u);
  EXPECT_EQ(broker.published[1].second, g("init_json"));
  // The ACK installs the session and the driver confirms it with an empty DATA frame (seq 0).
  ASSERT_EQ(deliver(DSEKP_TOPIC_ACK, g("ack_json")), DSEKP_OK);
  ASSERT_EQ(broker.published.size(), 3u);
  EXPECT_EQ(broker.published[2].first, "dsekp/data");
  EXPECT_NE(broker.published[2].second.find("\"seq\":0,"), std::string::npos);
  EXPECT_EQ(dsekp_device_confirmation_pending(&client.device), 0);
  const std::string reading = g("data0_plaintext");
  ASSERT_EQ(dsekp_client_send(&client, reinterpret_cast<const std::uint8_t*>(reading.data()),
                              reading.size()),
            DSEKP_OK);
  EXPECT_NE(broker.published.back().second.find("\"seq\":1,"), std::string::npos);
  std::string command;
  ASSERT_EQ(deliver(DSEKP_TOPIC_DOWN, g("down0_json"), &command), DSEKP_OK);
  EXPECT_EQ(command, g("down0_plaintext"));
  std::size_t n = 0;
  EXPECT_EQ(dsekp_client_on_message(&client, "other/topic", nullptr, 0, nullptr, 0, &n),
            DSEKP_ERR_INVALID_ARGUMENT);
  // v1.1: the edge lost the session and asks for a new one; the driver sends a new INIT at once.
  EXPECT_STREQ(dsekp_client_topic(&client, DSEKP_TOPIC_REKEY), "dsekp/rekey/esp32-01");
  const std::size_t before = broker.published.size();
  ASSERT_EQ(deliver(DSEKP_TOPIC_REKEY, g("rekey_json")), DSEKP_OK);
  ASSERT_EQ(broker.published.size(), before + 1);
  EXPECT_EQ(broker.published.back().first, "dsekp/init");
  EXPECT_EQ(dsekp_device_handshake_pending(&client.device), 1);
  // The same request again while that handshake runs changes nothing.
  const Bytes compact = hex(g("rekey_compact"));
  EXPECT_EQ(deliver(DSEKP_TOPIC_REKEY, std::string(compact.begin(), compact.end())),
            DSEKP_ERR_REKEY_MISMATCH);
  EXPECT_EQ(broker.published.size(), before + 1);
}

// A session a day old is renewed by the driver's poll, with no request from the edge: the bound
// on how long a device sends under a session the edge may have lost.
TEST_F(ClientDriver, ADayOldSessionIsRenewed) {
  broker.wall = std::stoull(g("t")) * 1000;
  ASSERT_EQ(dsekp_client_poll(&client), DSEKP_OK);
  ASSERT_EQ(deliver(DSEKP_TOPIC_ACK, g("ack_json")), DSEKP_OK);
  const std::size_t before = broker.published.size();
  broker.mono = kBootedMs + 24ull * 3600 * 1000 - 1;
  broker.wall += 24ull * 3600 * 1000 - 1;
  ASSERT_EQ(dsekp_client_poll(&client), DSEKP_OK);
  EXPECT_EQ(broker.published.size(), before);
  broker.mono += 1;
  broker.wall += 1;
  ASSERT_EQ(dsekp_client_poll(&client), DSEKP_OK);
  ASSERT_EQ(broker.published.size(), before + 1);
  EXPECT_EQ(broker.published.back().first, "dsekp/init");
}

// A clocked device keeps no `t` across a reboot; the edge refuses a `t` not greater than the
// last it accepted. So the first INIT of a boot waits until the device has been up for a second:
// its second is then later than that of any INIT before the reboot.
TEST_F(ClientDriver, TheFirstInitOfABootWaitsForOneSecondOfUptime) {
  broker.wall = 1'800'000'000'000;
  broker.mono = 999;
  ASSERT_EQ(dsekp_client_poll(&client), DSEKP_OK);
  EXPECT_TRUE(broker.published.empty());
  broker.mono = 1000;
  ASSERT_EQ(dsekp_client_poll(&client), DSEKP_OK);
  EXPECT_EQ(broker.published.size(), 1u);
}

TEST_F(ClientDriver, PublishFailureIsRetriedOnTheNextPoll) {
  broker.wall = 1'800'000'000'000;
  broker.fail = true;
  EXPECT_EQ(dsekp_client_poll(&client), DSEKP_CLIENT_ERR_PUBLISH);
  EXPECT_STREQ(dsekp_client_error_name(DSEKP_CLIENT_ERR_PUBLISH), "publish_failed");
  broker.fail = false;
  EXPECT_EQ(dsekp_client_poll(&client), DSEKP_OK);
  EXPECT_EQ(broker.published.size(), 1u);
}

TEST_F(ClientDriver, ExpiredHandshakeStartsAFreshOne) {
  broker.wall = 1'800'000'000'000;
  script.entries.push_back(Bytes(4, 0));  // jitter of the first send
  script.entries.push_back(hex("1235"));
  script.entries.push_back(Bytes(12, 0x42));
  ASSERT_EQ(dsekp_client_poll(&client), DSEKP_OK);
  const std::string first = broker.published.at(0).second;
  broker.mono = kBootedMs + 120'000;  // init_max_age_ms after the first send
  broker.wall += 120'000;
  ASSERT_EQ(dsekp_client_poll(&client), DSEKP_OK);
  ASSERT_EQ(broker.published.size(), 2u);
  EXPECT_NE(broker.published[1].second, first);
  EXPECT_NE(broker.published[1].second.find("\"sessctr\":4661"), std::string::npos);
}

TEST(ClientDriverInit, ClocklessDeviceAdvancesAndPersistsItsCounter) {
  Material m;
  Script script = golden_script();
  dsekp_device_params p = params_for(m, script);
  p.clockless = 1;
  Broker broker;
  broker.counter = 41;
  dsekp_client_io io = broker.io();
  io.unix_ms = nullptr;
  dsekp_client client{};
  std::uint8_t tx[512];
  ASSERT_EQ(dsekp_client_init(&client, &p, &io, tx, sizeof tx), DSEKP_OK);
  ASSERT_EQ(dsekp_client_poll(&client), DSEKP_OK);
  EXPECT_EQ(broker.counter, 42u);
  ASSERT_EQ(broker.published.size(), 1u);
  EXPECT_NE(broker.published[0].second.find("\"t\":42,"), std::string::npos);
  dsekp_client_wipe(&client);
  // A counter that cannot be stored starts no handshake.
  broker.counter_store_fails = true;
  broker.published.clear();
  script = golden_script();
  ASSERT_EQ(dsekp_client_init(&client, &p, &io, tx, sizeof tx), DSEKP_OK);
  EXPECT_EQ(dsekp_client_poll(&client), DSEKP_CLIENT_ERR_STORAGE);
  EXPECT_TRUE(broker.published.empty());
  dsekp_client_wipe(&client);
  // Clockless without storage callbacks, or clocked without a wall clock: refused at init.
  io.load_counter = nullptr;
  EXPECT_EQ(dsekp_client_init(&client, &p, &io, tx, sizeof tx), DSEKP_ERR_INVALID_ARGUMENT);
  p.clockless = 0;
  EXPECT_EQ(dsekp_client_init(&client, &p, &io, tx, sizeof tx), DSEKP_ERR_INVALID_ARGUMENT);
  // A transmit buffer below DSEKP_MAX_INIT_SIZE is refused.
  io = broker.io();
  EXPECT_EQ(dsekp_client_init(&client, &p, &io, tx, DSEKP_MAX_INIT_SIZE - 1),
            DSEKP_ERR_INVALID_ARGUMENT);
}

}  // namespace
