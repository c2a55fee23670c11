// ACK forgeries towards a device (PROTOCOL.md 6.1 step 3). The broker is open, so the attacker
// may publish on the device's ACK topic; the edge is paused (SIGSTOP) while the device's INIT is
// outstanding so that the forgeries reach the device before the genuine ACK. The device's real
// DeviceSession must refuse every forgery by name (no_pending_handshake, ack_mismatch,
// bad_ack_proof, or the decoder's error), stay pending, take the genuine ACK afterwards, and
// never send a frame under keys the edge does not have: every DATA frame it sends is accepted.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "async_mqtt_client.hpp"
#include "attack_frames.hpp"
#include "hostile_bed.hpp"

namespace dsekp::hostile {
namespace {

const std::vector<std::string> kLegit = {"legit-0", "legit-1", "legit-2"};
const std::string kAckTopic = "dsekp/init/ack/victim";

std::string forged_ack(const std::string& dev_id, std::uint16_t sessctr, std::uint8_t status,
                       const std::string& proof16, Encoding enc) {
  AckFrame ack;
  (void)ack.dev_id.assign(dev_id);
  ack.sessctr = sessctr;
  (void)ack.edge_nonce.assign(bytes_of("attacker-nce"));
  ack.status = status;
  (void)ack.proof.assign(bytes_of(proof16));
  return wire(ack, enc);
}

/// Stops `pid` and returns once every thread of it is stopped: kill() only sends SIGSTOP, and a
/// thread still running could answer the INIT published next (seen once beside the parallel
/// suite: the genuine ACK came before the replay meant to precede it).
bool pause_process(pid_t pid) {
  if (::kill(pid, SIGSTOP) != 0) return false;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  for (int attempt = 0; attempt < 1000; ++attempt) {
    bool all_stopped = true;
    for (const auto& task : std::filesystem::directory_iterator(tasks)) {
      std::ifstream stat(task.path() / "stat");
      std::string line;
      std::getline(stat, line);
      // "pid (comm) S ...": the state follows the last ')'.
      const auto close = line.rfind(')');
      if (close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'T') {
        all_stopped = false;
        break;
      }
    }
    if (all_stopped) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

class AckForgery : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(bed_.start());
    ASSERT_TRUE(start_streamers(bed_, kLegit, streamers_));
    ASSERT_TRUE(attacker_.connect(bed_.port()));
    ASSERT_TRUE(attacker_.subscribe("dsekp/init"));
    ASSERT_TRUE(link_.connect(bed_.port()));
    ASSERT_TRUE(link_.subscribe(kAckTopic));
  }

  // Hands the victim every ACK-topic message from number `from` on, checking each verdict.
  void feed(std::size_t from, const std::vector<Error>& verdicts) {
    ASSERT_TRUE(link_.wait_for_messages(kAckTopic, from + verdicts.size()));
    const auto messages = link_.messages(kAckTopic);
    for (std::size_t k = 0; k < verdicts.size(); ++k) {
      EXPECT_EQ(victim_.take_ack(messages[from + k].payload), verdicts[k])
          << "ACK-topic message " << from + k;
    }
  }

  // Seals and sends `n` readings; the edge must store every one of them.
  void send(int n) {
    std::vector<std::string> frames;
    for (int k = 0; k < n; ++k) {
      Error e = Error::ok;
      frames.push_back(victim_.data(R"({"victim":)" + std::to_string(sent_ + k) + "}", unix_ms(),
                                    k % 2 == 0 ? Encoding::json : Encoding::compact, nullptr, &e));
      ASSERT_EQ(e, Error::ok);
    }
    sent_ += n;
    ASSERT_TRUE(send_and_wait(bed_, link_, "victim", frames, static_cast<std::size_t>(sent_)));
  }

  Bed bed_{{"legit-0", "legit-1", "legit-2", "victim"}};
  std::vector<std::unique_ptr<Streamer>> streamers_;
  AsyncMqttClient attacker_{"attacker"};
  AsyncMqttClient link_{"victim"};
  HostileDevice victim_{bed_.material("victim"), 31};
  int sent_ = 0;
};

TEST_F(AckForgery, TheDeviceRefusesEveryForgedAckAndOnlySendsUnderTheEdgesKeys) {
  const Metrics start = bed_.metrics();
  const std::string junk16 = "0123456789abcdef";

  // No handshake outstanding: nothing to accept, and nothing to send under.
  ASSERT_TRUE(attacker_.publish(kAckTopic, forged_ack("victim", 1, 0, junk16, Encoding::json)));
  feed(0, {Error::no_pending_handshake});
  Error sealed = Error::ok;
  EXPECT_EQ(victim_.data("x", unix_ms(), Encoding::json, nullptr, &sealed), "");
  EXPECT_EQ(sealed, Error::no_session);

  // INIT outstanding, the edge paused: the attacker read the INIT and answers first.
  ASSERT_TRUE(pause_process(bed_.edge_pid()));
  InitFrame init;
  const std::string init_wire = victim_.init(unix_s(), Encoding::json, &init);
  ASSERT_TRUE(link_.publish("dsekp/init", init_wire));
  ASSERT_TRUE(attacker_.wait_for_messages("dsekp/init", 1));
  const std::string init_proof(reinterpret_cast<const char*>(init.proof.data()), 16);
  const std::vector<std::string> forgeries = {
      forged_ack("victim", init.sessctr, 0, junk16, Encoding::json),         // guessed proof
      forged_ack("victim", init.sessctr, 0, junk16, Encoding::compact),      // same, compact
      forged_ack("victim", init.sessctr, 1, junk16, Encoding::json),         // "rejected"
      forged_ack("victim", init.sessctr, 0, init_proof, Encoding::compact),  // INIT proof
      forged_ack("victim", init.sessctr ^ 1, 0, junk16, Encoding::json),     // other sessctr
      forged_ack("legit-0", init.sessctr, 0, junk16, Encoding::compact),     // other device
      "{",                                                                   // broken JSON
      wire(init, Encoding::compact),                                         // INIT reflected
  };
  for (const std::string& f : forgeries) ASSERT_TRUE(attacker_.publish(kAckTopic, f));
  feed(1,
       {Error::bad_ack_proof, Error::bad_ack_proof, Error::bad_ack_proof, Error::bad_ack_proof,
        Error::ack_mismatch, Error::ack_mismatch, Error::json_syntax, Error::unknown_frame_type});
  EXPECT_TRUE(victim_.session().handshake_pending());
  EXPECT_EQ(victim_.data("x", unix_ms(), Encoding::json, nullptr, &sealed), "");
  EXPECT_EQ(sealed, Error::no_session);  // still nothing to send under

  // The edge resumes and answers: the genuine ACK is accepted, and every frame gets in.
  ASSERT_EQ(::kill(bed_.edge_pid(), SIGCONT), 0);
  feed(1 + forgeries.size(), {Error::ok});
  const std::string genuine_ack = link_.messages(kAckTopic).back().payload;
  send(10);

  // Established: forged and replayed ACKs find no handshake outstanding.
  ASSERT_TRUE(attacker_.publish(kAckTopic, genuine_ack));
  ASSERT_TRUE(attacker_.publish(kAckTopic,
                                forged_ack("victim", init.sessctr, 0, junk16, Encoding::compact)));
  feed(2 + forgeries.size(), {Error::no_pending_handshake, Error::no_pending_handshake});
  send(5);

  // A rekey, the edge paused again: the old genuine ACK replayed against the new INIT.
  ASSERT_TRUE(pause_process(bed_.edge_pid()));
  const std::size_t before_rekey = link_.messages(kAckTopic).size();
  ASSERT_TRUE(link_.publish("dsekp/init", victim_.init(unix_s(), Encoding::compact)));
  ASSERT_TRUE(attacker_.publish(kAckTopic, genuine_ack));
  feed(before_rekey, {Error::ack_mismatch});
  // Meanwhile the device keeps sending under its current session (edge paused: queued).
  std::vector<std::string> frames;
  for (int k = 0; k < 3; ++k)
    frames.push_back(
        victim_.data(R"({"victim":)" + std::to_string(sent_ + k) + "}", unix_ms(), Encoding::json));
  sent_ += 3;
  ASSERT_EQ(::kill(bed_.edge_pid(), SIGCONT), 0);
  ASSERT_TRUE(send_and_wait(bed_, link_, "victim", frames, static_cast<std::size_t>(sent_)));
  feed(before_rekey + 1, {Error::ok});
  send(5);

  const Metrics end = bed_.metrics();
  // Forged ACKs never reach the edge; the device's frames were all accepted.
  EXPECT_TRUE(rejection_deltas_are(start, end, {}));
  EXPECT_EQ(bed_.telemetry("victim").size(), static_cast<std::size_t>(sent_));
  EXPECT_EQ(delta(start, end, "dsekp_handshakes_total{outcome=\"accepted\"}"), 2);
  EXPECT_EQ(delta(start, end, "dsekp_sessions_evicted_total"), 0);
  expect_streamers_lost_nothing(bed_, streamers_);
  expect_edge_healthy(bed_);
}

}  // namespace
}  // namespace dsekp::hostile
