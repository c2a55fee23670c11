// One simulated device against the real edge protocol in process (no broker): the handshake,
// the key-confirmation frame sent at once, the DATA cadence, bytes-identical INIT
// retransmission with backoff and expiry, resets (new session, seq from 0), rekeying while the
// old session keeps sending, PSK, downlink, forged ACKs, and the spread of start times.
#include "device/device_agent.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "crypto/openssl/openssl_crypto.hpp"
#include "dsekp/edge_session.hpp"
#include "dsekp/key_schedule.hpp"
#include "dsekp/psk_baseline.hpp"
#include "logs/log_schema.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::device {
namespace {

using Bytes = std::vector<std::uint8_t>;

ProvisionedDevice make_device(const std::string& dev_id) {
  const nlohmann::json m = {{"dev_id", dev_id},
                            {"dev_secret_hex", std::string(64, '7')},
                            {"edge_salt_hex", std::string(64, '5')},
                            {"psk_key_hex", "000102030405060708090a0b0c0d0e0f"}};
  auto devices = parse_credentials(m.dump(), "test");
  return std::move(devices[0]);
}

struct Published {
  std::string topic;
  Bytes payload;
  int mid = 0;
  std::uint64_t at_ms = 0;
};

/// Records every publish with the (simulated) time it happened.
class Recorder final : public Publisher {
 public:
  bool publish(const std::string& topic, ByteView payload, int, int& mid) override {
    mid = next_mid_++;
    sent.push_back({topic, Bytes(payload.begin(), payload.end()), mid, now});
    return true;
  }
  std::vector<Published> on(const std::string& topic) const {
    std::vector<Published> out;
    for (const auto& p : sent)
      if (p.topic == topic) out.push_back(p);
    return out;
  }
  std::vector<Published> sent;
  std::uint64_t now = 0;

 private:
  int next_mid_ = 1;
};

/// The edge side of the protocol core for one device.
class InProcessEdge {
 public:
  explicit InProcessEdge(const ProvisionedDevice& d)
      : secret_(d.credentials.dev_secret.clone()), edge_(crypto_, config(d)) {}

  /// Answers an INIT as the edge would; returns the encoded ACK (empty if refused).
  Bytes answer(const Bytes& init_wire) {
    InitFrame init;
    EXPECT_EQ(decode_init(init_wire, init), Error::ok);
    InitOutcome outcome;
    const std::uint64_t now_ms = unix_time_us() / 1000;
    if (edge_.handle_init(init, secret_, state_, now_ms, rng_, outcome) != Error::ok) return {};
    Bytes wire(kMaxFrameSize);
    std::size_t n = 0;
    EXPECT_EQ(encode(outcome.ack, detect_encoding(init_wire), wire, n), Error::ok);
    wire.resize(n);
    return wire;
  }

  /// Opens an uplink DATA frame; the frame and its plaintext.
  Error open(const Bytes& wire, DataFrame& frame, std::string& plaintext) {
    if (Error e = decode_data(wire, Direction::uplink, frame); e != Error::ok) return e;
    Bytes out(frame.ciphertext.size());
    DataOutcome outcome;
    const Error e = edge_.open_data(frame, state_, unix_time_us() / 1000, out, outcome);
    plaintext.assign(out.begin(),
                     out.begin() + static_cast<std::ptrdiff_t>(outcome.plaintext_size));
    return e;
  }

  Bytes downlink(const std::string& text) {
    DataFrame frame;
    EXPECT_EQ(edge_.seal_downlink(
                  state_, ByteView(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()),
                  unix_time_us() / 1000, frame),
              Error::ok);
    Bytes wire(kMaxFrameSize);
    std::size_t n = 0;
    EXPECT_EQ(encode(frame, Encoding::json, wire, n), Error::ok);
    wire.resize(n);
    return wire;
  }

  /// The REKEY request an edge that lost the session sends for the frame (sessctr, seq).
  Bytes rekey_request(std::uint16_t sessctr, std::uint32_t seq, const DevId& dev_id,
                      const EdgeSalt& salt) {
    RekeyFrame request;
    request.dev_id = dev_id;
    request.sessctr = sessctr;
    request.seq = seq;
    EXPECT_EQ(rekey_request_proof(crypto_, secret_, salt, request, request.proof), Error::ok);
    Bytes wire(kMaxFrameSize);
    std::size_t n = 0;
    EXPECT_EQ(encode(request, Encoding::compact, wire, n), Error::ok);
    wire.resize(n);
    return wire;
  }

 private:
  static EdgeConfig config(const ProvisionedDevice& d) {
    EdgeConfig c;
    c.edge_salt = d.credentials.edge_salt;
    return c;
  }

  OpenSslCrypto crypto_;
  OpenSslRng rng_;
  DevSecret secret_;
  EdgeProtocol edge_;
  EdgeDeviceState state_;
};

/// A device agent with its recorder, counters and logs in a temp dir.
struct Rig {
  explicit Rig(AgentConfig c, std::uint64_t index = 0) : config(std::move(c)) {
    data_log = std::make_unique<ClientLogWriter>(
        dir.file(logs::standard_file_name(logs::LogKind::client, config.mode)), config.mode);
    handshake_log =
        std::make_unique<HandshakeLogWriter>(dir.file(std::string(logs::kHandshakeLogFileName)));
    AgentContext context{&rng, &counters, data_log.get(), handshake_log.get()};
    agent = std::make_unique<DeviceAgent>(device, index, config, context, wire);
  }

  /// Runs the agent at `now` and returns its next wake-up.
  std::uint64_t step(std::uint64_t now) {
    wire.now = now;
    return agent->step(now);
  }

  /// Delivers the edge's answer to the last INIT published.
  void deliver_ack(InProcessEdge& edge) {
    const auto inits = wire.on(device.topics.init);
    ASSERT_FALSE(inits.empty());
    const Bytes ack = edge.answer(inits.back().payload);
    ASSERT_FALSE(ack.empty());
    agent->on_message(device.topics.ack, ack);
  }

  /// Hands the DATA frames published since the last call to the edge, in order, as the broker
  /// would; keeps what the edge made of each.
  void feed(InProcessEdge& edge) {
    const auto data = wire.on(device.topics.data);
    for (; fed < data.size(); ++fed) {
      DataFrame frame;
      std::string plaintext;
      const Error e = edge.open(data[fed].payload, frame, plaintext);
      opened.push_back({frame.sessctr, frame.seq, e, data[fed].at_ms});
    }
  }

  struct Opened {
    std::uint16_t sessctr;
    std::uint32_t seq;
    Error result;
    std::uint64_t at_ms;
  };
  std::vector<Opened> opened;
  std::size_t fed = 0;

  std::vector<std::vector<std::string>> handshake_rows() {
    handshake_log->close();
    std::vector<std::vector<std::string>> rows;
    std::string text = dsekp::test::read_file(dir.file(std::string(logs::kHandshakeLogFileName)));
    std::size_t start = text.find('\n') + 1;  // skip the header
    while (start < text.size()) {
      const std::size_t end = text.find('\n', start);
      std::vector<std::string> fields;
      std::string line = text.substr(start, end - start);
      for (std::size_t p = 0;;) {
        const std::size_t comma = line.find(',', p);
        fields.push_back(line.substr(p, comma - p));
        if (comma == std::string::npos) break;
        p = comma + 1;
      }
      rows.push_back(fields);
      start = end + 1;
    }
    return rows;
  }

  dsekp::test::TempDir dir;
  ProvisionedDevice device = make_device("esp32-01");
  AgentConfig config;
  MbedtlsRng rng;
  FleetCounters counters;
  Recorder wire;
  std::unique_ptr<ClientLogWriter> data_log;
  std::unique_ptr<HandshakeLogWriter> handshake_log;
  std::unique_ptr<DeviceAgent> agent;
};

AgentConfig dsekp_config(std::uint64_t count, std::uint32_t interval_ms) {
  AgentConfig c;
  c.mode = Mode::dsekp;
  c.count = count;
  c.interval_ms = interval_ms;
  return c;
}

TEST(DeviceAgent, HandshakeThenConfirmingFrameAtOnceThenOneFrameEveryInterval) {
  Rig rig(dsekp_config(4, 1000));
  InProcessEdge edge(rig.device);
  rig.agent->on_link_ready(10'000);
  const std::uint64_t boot = rig.step(10'000);
  ASSERT_GE(boot, 10'000u);  // the start offset: uniform in [0, interval)
  ASSERT_LT(boot, 11'000u);
  EXPECT_GE(rig.step(boot), boot);
  ASSERT_EQ(rig.wire.sent.size(), 1u);
  EXPECT_EQ(rig.wire.sent[0].topic, "dsekp/init");

  rig.deliver_ack(edge);
  std::uint64_t next = rig.step(boot);  // the ACK came at `boot`: the first DATA goes now
  auto data = rig.wire.on("dsekp/data");
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(data[0].at_ms, boot);
  EXPECT_EQ(next, boot + 1000);
  for (int i = 1; i < 4; ++i) next = rig.step(next);
  EXPECT_EQ(next, kNever);  // all sent
  EXPECT_TRUE(rig.agent->done());
  data = rig.wire.on("dsekp/data");
  ASSERT_EQ(data.size(), 4u);
  for (std::uint32_t i = 0; i < 4; ++i) {
    DataFrame frame;
    std::string plaintext;
    ASSERT_EQ(edge.open(data[i].payload, frame, plaintext), Error::ok) << i;
    EXPECT_EQ(frame.seq, i);
    EXPECT_EQ(data[i].at_ms, boot + 1000 * i);
    EXPECT_EQ(plaintext.rfind("{\"t\":", 0), 0u) << plaintext;
  }
  // PUBACKs count only for DATA frames.
  for (const auto& p : rig.wire.sent) rig.agent->on_publish_acked(p.mid);
  EXPECT_EQ(rig.counters.packets_sent, 4u);
  EXPECT_EQ(rig.counters.packets_acked, 4u);
  EXPECT_EQ(rig.agent->unacked(), 0u);
  const auto rows = rig.handshake_rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], "esp32-01");
  EXPECT_EQ(rows[0][4], "1");
  EXPECT_EQ(rows[0][5], "ok");
  EXPECT_GE(std::stoull(rows[0][3]), std::stoull(rows[0][2]));
}

TEST(DeviceAgent, RetransmitsTheSameBytesWithBackoffThenStartsOverThenGivesUp) {
  AgentConfig c = dsekp_config(5, 1000);
  c.session.retransmit_initial_ms = 100;
  c.session.retransmit_max_ms = 400;
  c.session.init_max_age_ms = 1000;
  c.max_handshake_failures = 2;
  Rig rig(c);
  rig.agent->on_link_ready(0);
  std::uint64_t now = rig.step(0);
  for (int i = 0; i < 200 && now != kNever; ++i) now = rig.step(now);
  ASSERT_EQ(now, kNever);
  EXPECT_TRUE(rig.agent->failed());
  EXPECT_NE(rig.agent->failure().find("2 handshake(s) in a row"), std::string::npos);

  const auto inits = rig.wire.on("dsekp/init");
  std::vector<std::vector<Published>> handshakes;
  for (const auto& p : inits) {
    if (handshakes.empty() || handshakes.back().front().payload != p.payload)
      handshakes.emplace_back();
    handshakes.back().push_back(p);
  }
  ASSERT_EQ(handshakes.size(), 2u);
  for (const auto& h : handshakes) {
    ASSERT_GE(h.size(), 4u);
    // Backoff: the n-th wait is in [d/2, d] with d = 100, 200, 400, 400, ...
    std::uint64_t d = 100;
    for (std::size_t i = 1; i < h.size(); ++i) {
      const std::uint64_t gap = h[i].at_ms - h[i - 1].at_ms;
      EXPECT_GE(gap, d / 2) << i;
      EXPECT_LE(gap, d) << i;
      d = std::min<std::uint64_t>(d * 2, 400);
    }
    EXPECT_LT(h.back().at_ms - h.front().at_ms, 1000u);  // nothing sent once expired
  }
  // The second handshake starts when the first expires.
  EXPECT_EQ(handshakes[1].front().at_ms, handshakes[0].front().at_ms + 1000);
  EXPECT_EQ(rig.counters.handshakes_started, 2u);
  EXPECT_EQ(rig.counters.handshakes_timeout, 2u);
  EXPECT_EQ(rig.counters.retransmissions, inits.size() - 2);
  const auto rows = rig.handshake_rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][5], "timeout");
  EXPECT_EQ(rows[0][3], "");  // no ack_recv_ms
  EXPECT_EQ(rows[0][4], std::to_string(handshakes[0].size()));
  EXPECT_NE(rows[0][1], rows[1][1]);  // a new sessctr
}

TEST(DeviceAgent, ResetStartsANewSessionAndSeqFromZero) {
  AgentConfig c = dsekp_config(9, 100);
  c.encoding = Encoding::compact;
  c.reset_every = 3;
  Rig rig(c);
  InProcessEdge edge(rig.device);
  rig.agent->on_link_ready(0);
  std::uint64_t now = rig.step(0);
  for (int i = 0; i < 100 && now != kNever; ++i) {
    now = rig.step(now);
    rig.feed(edge);
    const auto inits = rig.wire.on("dsekp/init");
    if (inits.size() > rig.counters.handshakes_ok) rig.deliver_ack(edge);
  }
  ASSERT_TRUE(rig.agent->done());
  const auto data = rig.wire.on("dsekp/data");
  ASSERT_EQ(data.size(), 9u);
  ASSERT_EQ(rig.opened.size(), 9u);
  std::vector<std::uint16_t> sessions;
  for (std::size_t i = 0; i < data.size(); ++i) {
    EXPECT_EQ(data[i].payload[0], 0x03);  // compact DATA
    const auto& o = rig.opened[i];
    EXPECT_EQ(o.result, Error::ok) << i;
    EXPECT_EQ(o.seq, i % 3) << i;
    if (i % 3 == 0) sessions.push_back(o.sessctr);
    EXPECT_EQ(o.sessctr, sessions.back());
  }
  EXPECT_EQ(std::set<std::uint16_t>(sessions.begin(), sessions.end()).size(), 3u);
  EXPECT_EQ(rig.counters.resets, 2u);  // none after the last frame
  EXPECT_EQ(rig.counters.handshakes_ok, 3u);
  const auto rows = rig.handshake_rows();
  ASSERT_EQ(rows.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(rows[i][5], "ok");
    EXPECT_EQ(rows[i][1], std::to_string(sessions[i]));
  }
}

TEST(DeviceAgent, RekeyKeepsTheOldSessionUntilTheAck) {
  AgentConfig c = dsekp_config(8, 100);
  c.session.rekey_at_seq = 3;
  Rig rig(c);
  InProcessEdge edge(rig.device);
  rig.agent->on_link_ready(0);
  auto step = [&](std::uint64_t t) {
    const std::uint64_t next = rig.step(t);
    rig.feed(edge);
    return next;
  };
  std::uint64_t now = step(0);
  now = step(now);  // INIT
  rig.deliver_ack(edge);
  now = step(now);  // seq 0 (confirmation)
  now = step(now);  // seq 1
  now = step(now);  // seq 2: rekey due, a new INIT goes out
  EXPECT_EQ(rig.wire.on("dsekp/init").size(), 2u);
  now = step(now);  // seq 3, still the old session: no ACK yet
  rig.deliver_ack(edge);
  const std::uint64_t ack_time = now;
  now = step(now);  // the new session's confirming frame, at once
  for (int i = 0; i < 10 && now != kNever; ++i) now = step(now);
  ASSERT_EQ(rig.opened.size(), 8u);
  std::vector<std::pair<std::uint16_t, std::uint32_t>> ids;
  for (const auto& o : rig.opened) {
    EXPECT_EQ(o.result, Error::ok);
    ids.emplace_back(o.sessctr, o.seq);
  }
  const std::uint16_t a = ids[0].first;
  const std::uint16_t b = ids[4].first;
  EXPECT_NE(a, b);
  EXPECT_EQ(ids[3], std::make_pair(a, 3u));
  EXPECT_EQ(ids[4], std::make_pair(b, 0u));
  EXPECT_EQ(rig.opened[4].at_ms, ack_time);
  EXPECT_EQ(rig.opened[5].at_ms, ack_time + 100);
  // The new session reached seq 3 too: a third handshake started, and the frames after it are
  // sealed under the second session, as no ACK comes for the third.
  EXPECT_EQ(rig.counters.handshakes_ok, 2u);
  EXPECT_EQ(rig.wire.on("dsekp/init").size(), 3u);
  EXPECT_EQ(ids[7], std::make_pair(b, 3u));
}

TEST(DeviceAgent, PskFramesOpenWithTheKeyAndCountSeqFromZero) {
  AgentConfig c;
  c.mode = Mode::psk;
  c.count = 3;
  c.interval_ms = 50;
  c.qos = 0;
  Rig rig(c);
  rig.agent->on_link_ready(0);
  std::uint64_t now = rig.step(0);
  for (int i = 0; i < 10 && now != kNever; ++i) now = rig.step(now);
  const auto frames = rig.wire.on("psk/data");
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(rig.counters.packets_acked, 3u);  // QoS 0: nothing to wait for
  OpenSslCrypto crypto;
  for (std::uint32_t i = 0; i < 3; ++i) {
    PskFrame frame;
    ASSERT_EQ(decode_psk(frames[i].payload, frame), Error::ok);
    EXPECT_EQ(frame.seq, i);
    Bytes plaintext(frame.ciphertext.size());
    std::size_t n = 0;
    ASSERT_EQ(psk_open(crypto, rig.device.psk_key, frame, plaintext, n), Error::ok);
    EXPECT_EQ(std::string(plaintext.begin(), plaintext.end()).rfind("{\"t\":", 0), 0u);
  }
  EXPECT_TRUE(rig.wire.on("dsekp/init").empty());
}

/// Boots the agent, answers its INIT and opens its first (session-confirming) DATA frame at the
/// edge; returns the time of the last step.
std::uint64_t confirm_session(Rig& rig, InProcessEdge& edge, DataFrame& first) {
  rig.agent->on_link_ready(0);
  std::uint64_t now = rig.step(0);
  now = rig.step(now);
  rig.deliver_ack(edge);
  now = rig.step(now);
  const auto data = rig.wire.on("dsekp/data");
  EXPECT_EQ(data.size(), 1u);
  std::string plaintext;
  if (!data.empty()) {
    EXPECT_EQ(edge.open(data[0].payload, first, plaintext), Error::ok);
  }
  return now;
}

TEST(DeviceAgent, DownlinkIsOpenedAndReplaysAreRejected) {
  Rig rig(dsekp_config(0, 1000));
  InProcessEdge edge(rig.device);
  DataFrame first;
  confirm_session(rig, edge, first);
  const Bytes down = edge.downlink(R"({"led":1})");
  rig.agent->on_message("dsekp/down/esp32-01", down);
  EXPECT_EQ(rig.counters.downlinks_received, 1u);
  rig.agent->on_message("dsekp/down/esp32-01", down);
  EXPECT_EQ(rig.counters.downlinks_rejected, 1u);
}

TEST(DeviceAgent, AnAuthenticRekeyRequestStartsANewHandshakeAtOnce) {
  Rig rig(dsekp_config(0, 1000));
  InProcessEdge edge(rig.device);
  DataFrame frame;
  const std::uint64_t now = confirm_session(rig, edge, frame);
  ASSERT_EQ(rig.device.topics.rekey, "dsekp/rekey/esp32-01");
  const std::size_t inits = rig.wire.on("dsekp/init").size();

  // A request for another session (or under another secret) changes nothing.
  rig.agent->on_message(rig.device.topics.rekey,
                        edge.rekey_request(static_cast<std::uint16_t>(frame.sessctr + 1), 0,
                                           frame.dev_id, rig.device.credentials.edge_salt));
  EXPECT_EQ(rig.counters.rekey_requests_ignored, 1u);
  EXPECT_EQ(rig.wire.on("dsekp/init").size(), inits);

  rig.agent->on_message(
      rig.device.topics.rekey,
      edge.rekey_request(frame.sessctr, frame.seq, frame.dev_id, rig.device.credentials.edge_salt));
  EXPECT_EQ(rig.counters.rekey_requests_accepted, 1u);
  (void)rig.step(now);
  EXPECT_EQ(rig.wire.on("dsekp/init").size(), inits + 1);
}

TEST(DeviceAgent, ForgedAckIsRefusedAndTheGenuineOneStillWorks) {
  Rig rig(dsekp_config(1, 1000));
  InProcessEdge edge(rig.device);
  rig.agent->on_link_ready(0);
  std::uint64_t now = rig.step(0);
  now = rig.step(now);
  const Bytes ack = edge.answer(rig.wire.on("dsekp/init").back().payload);
  AckFrame forged;
  ASSERT_EQ(decode_ack(ack, forged), Error::ok);
  forged.proof.data()[0] ^= 1;
  Bytes forged_wire(kMaxFrameSize);
  std::size_t n = 0;
  ASSERT_EQ(encode(forged, Encoding::json, forged_wire, n), Error::ok);
  forged_wire.resize(n);
  rig.agent->on_message("dsekp/init/ack/esp32-01", forged_wire);
  EXPECT_EQ(rig.counters.bad_acks, 1u);
  EXPECT_TRUE(rig.wire.on("dsekp/data").empty());
  rig.agent->on_message("dsekp/init/ack/esp32-01", Bytes{'{', '}'});  // not an ACK
  EXPECT_EQ(rig.counters.bad_acks, 2u);
  rig.agent->on_message("dsekp/init/ack/esp32-01", ack);
  rig.step(now);
  EXPECT_EQ(rig.wire.on("dsekp/data").size(), 1u);
  rig.agent->on_message("dsekp/init/ack/esp32-01", ack);  // a duplicate ACK
  EXPECT_EQ(rig.counters.stray_acks, 1u);
  EXPECT_EQ(rig.counters.handshakes_ok, 1u);
}

TEST(DeviceAgent, StartTimesAreSpreadOverOneInterval) {
  // The same fleet seed, 200 devices: first publishes spread uniformly over [0, 1000) ms.
  std::vector<std::uint64_t> boots;
  MbedtlsRng rng;
  FleetCounters counters;
  Recorder wire;
  const ProvisionedDevice device = make_device("d");
  const AgentConfig config = dsekp_config(1, 1000);
  for (std::uint64_t i = 0; i < 200; ++i) {
    DeviceAgent agent(device, i, config, AgentContext{&rng, &counters, nullptr, nullptr}, wire);
    agent.on_link_ready(1);
    boots.push_back(agent.step(0) - 1);  // not due yet at 0: the answer is the boot time
  }
  std::sort(boots.begin(), boots.end());
  EXPECT_LT(boots.back(), 1000u);
  EXPECT_LT(boots.front(), 100u);
  EXPECT_GT(boots.back(), 900u);
  EXPECT_TRUE(wire.sent.empty());
  EXPECT_GT(std::set<std::uint64_t>(boots.begin(), boots.end()).size(), 150u);
  // Reproducible: device 7 of seed 1 always starts at the same offset.
  DeviceAgent again(device, 7, config, AgentContext{&rng, &counters, nullptr, nullptr}, wire);
  again.on_link_ready(1);
  DeviceAgent first(device, 7, config, AgentContext{&rng, &counters, nullptr, nullptr}, wire);
  first.on_link_ready(1);
  EXPECT_EQ(again.step(0), first.step(0));
}

}  // namespace
}  // namespace dsekp::device
