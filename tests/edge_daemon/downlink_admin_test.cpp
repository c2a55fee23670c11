// `dsekp edge send DEV_ID PAYLOAD` end to end, on a broker with the accounts and ACL of
// `dsekp keys broker-config`: the command asks the running edge (admin topic, edge account only),
// the edge seals under the device's confirmed session, commits the seq, publishes, answers. A real
// device session receives and opens every downlink; seqs only grow, across an edge restart too;
// refusals (no confirmed session, unknown device) come back with their names; a device account
// cannot inject admin requests; with no edge running the command times out with a message.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/support/build_paths.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/daemon_test_support.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/mqtt_test_client.hpp"
#include "tests/support/registry_bed.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge::testing {
namespace {

class DownlinkAdminTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(register_device(registry_path_, "esp32-01", material_));
    const auto config =
        run({::dsekp::test::cli_path(), "keys", "broker-config", "--db", registry_path_,
             "--out-dir", dir_.file("broker"), "--edge-user", "edge"});
    ASSERT_EQ(config.exit_code, 0) << config.err;
    broker_ = std::make_unique<dsekp::test::MosquittoBroker>(dir_.file("broker"), config.out);
  }

  dsekp::test::RunResult run(const std::vector<std::string>& argv) {
    return dsekp::test::run_command(argv, dir_.path().string());
  }
  std::string broker_address() const { return "127.0.0.1:" + std::to_string(broker_->port()); }

  void start_edge(const std::vector<std::string>& extra = {}) {
    const std::string ready = dir_.file("edge.ready");
    std::filesystem::remove(ready);
    err_file_ = dir_.file("edge-" + std::to_string(++starts_) + ".err");
    std::vector<std::string> argv = {::dsekp::test::cli_path(),
                                     "edge",
                                     "--broker",
                                     broker_address(),
                                     "--db",
                                     registry_path_,
                                     "--logs-dir",
                                     dir_.file("logs"),
                                     "--metrics",
                                     "off",
                                     "--ready-file",
                                     ready};
    argv.insert(argv.end(), extra.begin(), extra.end());
    edge_ = std::make_unique<dsekp::test::ChildProcess>(argv, dir_.file("edge.out"), err_file_);
    ASSERT_TRUE(
        wait_until([&] { return std::filesystem::exists(ready); }, std::chrono::seconds(10)))
        << dsekp::test::read_file(err_file_);
  }
  void stop_edge() {
    edge_->signal(SIGTERM);
    ASSERT_EQ(edge_->wait_for(std::chrono::seconds(10)), std::optional<int>(0));
  }

  /// `dsekp edge send` with the registry's edge account; the parsed JSON answer (null if none).
  nlohmann::json send(const std::string& dev_id, const std::string& payload, int expected_exit,
                      std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {::dsekp::test::cli_path(), "edge", "send",        "--broker",
                                     broker_address(),          "--db", registry_path_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {dev_id, payload});
    const auto r = run(argv);
    EXPECT_EQ(r.exit_code, expected_exit) << r.out << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
  }

  /// `dsekp edge send --payload-file FILE` (a file in the test's folder), as send().
  nlohmann::json send_from_file(const std::string& file, std::vector<std::string> extra) {
    extra.insert(extra.end(), {"--payload-file", dir_.file(file)});
    std::vector<std::string> argv = {::dsekp::test::cli_path(), "edge", "send",        "--broker",
                                     broker_address(),          "--db", registry_path_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back("esp32-01");
    const auto r = run(argv);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
  }
  static void write_file(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }

  /// The device logs in, subscribes to its ACK and downlink topics and handshakes (the ACK is
  /// its first received message).
  void connect_and_handshake(dsekp::test::MqttTestClient& client, ScriptedDevice& device) {
    ASSERT_EQ(client.connect(broker_->port(), "esp32-01", material_.broker_password),
              std::optional<int>(0));
    ASSERT_EQ(client.subscribe(kAckTopic), std::optional<int>(1));
    ASSERT_EQ(client.subscribe(kDownTopic), std::optional<int>(1));
    ASSERT_TRUE(client.publish(
        kInitTopic,
        as_string(device.init(Encoding::json, static_cast<std::uint32_t>(unix_ms_now() / 1000)))));
    const auto ack = client.wait_for_message(kAckTopic);
    ASSERT_TRUE(ack.has_value()) << dsekp::test::read_file(err_file_);
    ASSERT_EQ(device.take_ack(bytes_of(ack->payload)), Error::ok);
  }
  /// The key-confirming DATA frame, and the wait until the edge logged it.
  void confirm(dsekp::test::MqttTestClient& client, ScriptedDevice& device) {
    ASSERT_TRUE(client.publish(kDataTopic,
                               as_string(device.data(reading(0), unix_ms_now(), Encoding::json))));
    ASSERT_TRUE(wait_until([&] { return line_count(dir_.file("logs/server_logs_dsekp.csv")) >= 2; },
                           std::chrono::seconds(10)));
  }

  // A new registry's devices publish on per-device uplink topics (the generated ACL's default).
  static constexpr const char* kInitTopic = "dsekp/init/esp32-01";
  static constexpr const char* kDataTopic = "dsekp/data/esp32-01";
  static constexpr const char* kAckTopic = "dsekp/init/ack/esp32-01";
  static constexpr const char* kDownTopic = "dsekp/down/esp32-01";
  static constexpr const char* kRekeyTopic = "dsekp/rekey/esp32-01";

  dsekp::test::TempDir dir_;
  std::string registry_path_ = dir_.file("registry.db");
  DeviceMaterial material_;
  std::unique_ptr<dsekp::test::MosquittoBroker> broker_;
  std::unique_ptr<dsekp::test::ChildProcess> edge_;
  std::string err_file_;
  int starts_ = 0;
};

TEST_F(DownlinkAdminTest, TheEdgeSealsSendsAndNeverReusesASeq) {
  start_edge();
  dsekp::test::MqttTestClient device_client("esp32-01");
  ScriptedDevice device(material_, 5);
  connect_and_handshake(device_client, device);
  const std::string down_topic = kDownTopic;

  // Not confirmed yet (no DATA frame under the new keys): held, not sent under a session the
  // device does not have, and sent once the confirmation comes.
  const auto early = send("esp32-01", "too early", 75, {"--timeout", "1"});
  EXPECT_EQ(early.value("status", ""), "queued") << early;
  EXPECT_EQ(early.value("ok", true), false);

  confirm(device_client, device);

  // A forged request from a device account: the ACL drops it (checked below: never answered).
  ASSERT_TRUE(device_client.publish(
      "dsekp/admin/downlink",
      R"({"request_id":"forged-1","dev_id":"esp32-01","sealed_b64":"Zm9yZ2Vk"})"));

  std::vector<std::string> texts = {"set-interval 5", "led on", "{\"reboot\":false}"};
  std::vector<std::uint32_t> seqs;
  const auto receive = [&](std::size_t index, const std::string& expected) {
    ASSERT_TRUE(device_client.wait_for_count(index + 1));
    const auto& m = device_client.received()[index];
    ASSERT_EQ(m.topic, down_topic);
    std::string opened;
    ASSERT_EQ(device.open_down(bytes_of(m.payload), opened), Error::ok);
    EXPECT_EQ(opened, expected);
  };
  // received()[0] is the ACK, [1] the held downlink.
  receive(1, "too early");
  std::size_t next = 2;
  for (const std::string& text : texts) {
    const auto answer = send("esp32-01", text, 0);
    ASSERT_TRUE(answer.value("ok", false)) << answer;
    seqs.push_back(answer.at("seq").get<std::uint32_t>());
    receive(next++, text);
  }
  const auto hex = send("esp32-01", "00ff10", 0, {"--hex"});
  seqs.push_back(hex.at("seq").get<std::uint32_t>());
  receive(next++, std::string("\x00\xff\x10", 3));
  // From a file, so that the command is not on the command line (ps): the bytes as they are,
  // and with --hex without the line break `echo` ends a line with.
  write_file(dir_.file("command.txt"), "unlock 4711\n");
  const auto from_file = send_from_file("command.txt", {});
  seqs.push_back(from_file.at("seq").get<std::uint32_t>());
  receive(next++, "unlock 4711\n");
  write_file(dir_.file("command.hex"), "0aff\n");
  const auto hex_file = send_from_file("command.hex", {"--hex"});
  seqs.push_back(hex_file.at("seq").get<std::uint32_t>());
  receive(next++, std::string("\x0a\xff", 2));

  // A restarted edge continues after the last committed seq (once the device has sent: until
  // then the edge does not know it is online).
  stop_edge();
  start_edge();
  ASSERT_TRUE(device_client.publish(
      kDataTopic, as_string(device.data(reading(1), unix_ms_now(), Encoding::json))));
  ASSERT_TRUE(wait_until([&] { return line_count(dir_.file("logs/server_logs_dsekp.csv")) >= 3; },
                         std::chrono::seconds(10)));
  const auto after_restart = send("esp32-01", "after restart", 0);
  seqs.push_back(after_restart.at("seq").get<std::uint32_t>());
  receive(next++, "after restart");
  for (std::size_t i = 1; i < seqs.size(); ++i) EXPECT_GT(seqs[i], seqs[i - 1]) << i;

  // A request id seen before is answered again without a second frame.
  const auto first = send("esp32-01", "once", 0, {"--request-id", "fixed-id"});
  const auto again = send("esp32-01", "once", 0, {"--request-id", "fixed-id"});
  EXPECT_EQ(first.at("seq"), again.at("seq"));
  receive(next++, "once");

  const auto unknown = send("nobody", "x", 1);
  EXPECT_EQ(unknown.value("status", ""), "refused");
  EXPECT_EQ(unknown.value("reason", ""), "unknown_device");
  const auto too_large = send("esp32-01", std::string(1025, 'x'), 1);
  EXPECT_EQ(too_large.value("reason", ""), "payload_too_large");
  const auto largest = send("esp32-01", std::string(1024, 'y'), 0);
  EXPECT_TRUE(largest.value("ok", false)) << largest;
  receive(next++, std::string(1024, 'y'));

  stop_edge();
  std::string all;
  for (int i = 1; i <= starts_; ++i)
    all += dsekp::test::read_file(dir_.file("edge-" + std::to_string(i) + ".err"));
  EXPECT_EQ(all.find("forged"), std::string::npos) << all;
  // Every message the device got: the ACK and one frame per distinct request (a second frame
  // for "fixed-id" would have arrived before the one for "nobody" was refused).
  EXPECT_FALSE(device_client.wait_for_count(next + 1));
  EXPECT_EQ(device_client.received().size(), next);

  // No edge running: a clear error, not a hang.
  const auto r = run({::dsekp::test::cli_path(), "edge", "send", "--broker", broker_address(),
                      "--db", registry_path_, "--timeout", "1", "esp32-01", "x"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is `dsekp edge` running?"), std::string::npos) << r.err;
}

// The finding: the downlink seq lived only in the state, so a state that went back in time (an
// older copy restored, un-synced commits lost to a power cut) made the edge seal the next
// downlink with a seq, and so an AES-GCM nonce, it had already used; the device refused the
// genuine command as a replay. Here the state database is restored from a copy taken before
// three downlinks, behind a SIGKILL; the edge must go on from the downlink journal.
TEST_F(DownlinkAdminTest, AStateRestoredFromAnOlderCopyNeverReusesADownlinkSeq) {
  start_edge();
  dsekp::test::MqttTestClient device_client("esp32-01");
  ScriptedDevice device(material_, 6);
  connect_and_handshake(device_client, device);
  confirm(device_client, device);
  stop_edge();
  const std::string state = registry_path_ + ".state";
  const std::vector<std::string> files = {state, state + "-wal", state + "-shm"};
  for (const std::string& f : files)
    if (std::filesystem::exists(f)) std::filesystem::copy_file(f, f + ".backup");

  std::set<std::uint32_t> seqs;
  std::size_t next = 1;  // received()[0] is the ACK
  const auto send_and_open = [&](const std::string& text) {
    const auto answer = send("esp32-01", text, 0);
    ASSERT_TRUE(answer.value("ok", false)) << answer;
    EXPECT_TRUE(seqs.insert(answer.at("seq").get<std::uint32_t>()).second)
        << "seq " << answer.at("seq") << " used twice";
    ASSERT_TRUE(device_client.wait_for_count(next + 1));
    std::string opened;
    EXPECT_EQ(device.open_down(bytes_of(device_client.received()[next++].payload), opened),
              Error::ok)
        << "the device refused the genuine command \"" << text << "\"";
    EXPECT_EQ(opened, text);
  };
  // Sent at once, not held for the device's next frame: this test is about the seqs.
  start_edge({"--downlink-queue-ttl", "0"});
  for (const char* text : {"relay off", "relay on", "relay off again"}) send_and_open(text);
  edge_->signal(SIGKILL);
  ASSERT_EQ(edge_->wait_for(std::chrono::seconds(5)), std::optional<int>(128 + SIGKILL));
  for (const std::string& f : files) {
    std::filesystem::remove(f);
    if (std::filesystem::exists(f + ".backup")) std::filesystem::copy_file(f + ".backup", f);
  }
  start_edge({"--downlink-queue-ttl", "0"});
  for (const char* text : {"after the restore", "and once more", "and again"}) send_and_open(text);
  EXPECT_EQ(seqs.size(), 6u);
  EXPECT_NE(dsekp::test::read_file(err_file_).find("was behind the journal"), std::string::npos)
      << dsekp::test::read_file(err_file_);
  stop_edge();
}

// Liveness (PROTOCOL.md 6.3 step 1, 6.1 step 7): the edge lost the device's state (here: the
// state file is gone); the device, which cannot know, sends its next reading, is asked to rekey
// on its REKEY topic (which the generated ACL lets it read and the edge write), handshakes again,
// and its readings and downlinks flow again.
TEST_F(DownlinkAdminTest, ADeviceWhoseStateTheEdgeLostIsAskedToRekeyAndGetsBackIn) {
  start_edge();
  dsekp::test::MqttTestClient device_client("esp32-01");
  ScriptedDevice device(material_, 7);
  connect_and_handshake(device_client, device);
  ASSERT_EQ(device_client.subscribe(kRekeyTopic), std::optional<int>(1));
  confirm(device_client, device);
  stop_edge();
  const std::string state = registry_path_ + ".state";
  for (const std::string& f : {state, state + "-wal", state + "-shm"}) std::filesystem::remove(f);
  start_edge();

  ASSERT_TRUE(device_client.publish(
      kDataTopic, as_string(device.data(reading(1), unix_ms_now(), Encoding::json))));
  const auto rekey = device_client.wait_for_message(kRekeyTopic);
  ASSERT_TRUE(rekey.has_value()) << dsekp::test::read_file(err_file_);
  RekeyFrame request;
  ASSERT_EQ(decode_rekey(bytes_of(rekey->payload), request), Error::ok);
  ASSERT_EQ(device.session().handle_rekey(request, 1), Error::ok);
  ASSERT_TRUE(device.session().rekey_due());

  const std::size_t before = device_client.received().size();
  ASSERT_TRUE(device_client.publish(
      kInitTopic,
      as_string(device.init(Encoding::json, static_cast<std::uint32_t>(unix_ms_now() / 1000)))));
  ASSERT_TRUE(device_client.wait_for_count(before + 1)) << dsekp::test::read_file(err_file_);
  const auto& ack = device_client.received()[before];
  ASSERT_EQ(ack.topic, kAckTopic);
  ASSERT_EQ(device.take_ack(bytes_of(ack.payload)), Error::ok);
  ASSERT_TRUE(device_client.publish(
      kDataTopic, as_string(device.data(reading(2), unix_ms_now(), Encoding::json))));
  ASSERT_TRUE(wait_until([&] { return line_count(dir_.file("logs/server_logs_dsekp.csv")) >= 3; },
                         std::chrono::seconds(10)))
      << dsekp::test::read_file(err_file_);
  const auto answer = send("esp32-01", "relay on", 0);
  ASSERT_TRUE(answer.value("ok", false)) << answer;
  ASSERT_TRUE(device_client.wait_for_count(before + 2));
  std::string opened;
  EXPECT_EQ(device.open_down(bytes_of(device_client.received()[before + 1].payload), opened),
            Error::ok);
  EXPECT_EQ(opened, "relay on");
  EXPECT_NE(dsekp::test::read_file(err_file_).find("rejected unknown_session"), std::string::npos);
  stop_edge();
}

TEST_F(DownlinkAdminTest, BadArgumentsAreRefused) {
  auto r = run({::dsekp::test::cli_path(), "edge", "send", "--broker", broker_address(), "--db",
                registry_path_, "--hex", "esp32-01", "0g"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("the payload is not hex: digit 2"), std::string::npos) << r.err;
  r = run({::dsekp::test::cli_path(), "edge", "send", "--broker", broker_address(), "--db",
           registry_path_, "--hex", "esp32-01", "00ff/0"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("the payload is not hex: digit 5"), std::string::npos) << r.err;
  r = run({::dsekp::test::cli_path(), "edge", "send", "--broker", broker_address(), "--db",
           registry_path_, "--hex", "esp32-01", "abc"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("odd number of digits"), std::string::npos) << r.err;
  r = run({::dsekp::test::cli_path(), "edge", "send", "--broker", "nonsense", "esp32-01", "x"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--broker"), std::string::npos) << r.err;
  r = run({::dsekp::test::cli_path(), "edge", "send", "--broker", broker_address(), "esp32-01"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("PAYLOAD or --payload-file is required"), std::string::npos) << r.err;
  r = run({::dsekp::test::cli_path(), "edge", "send", "--broker", broker_address(),
           "--payload-file", dir_.file("none.txt"), "esp32-01", "x"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("not both"), std::string::npos) << r.err;
  r = run({::dsekp::test::cli_path(), "edge", "send", "--broker", broker_address(), "--db",
           registry_path_, "--payload-file", dir_.file("none.txt"), "esp32-01"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("cannot read"), std::string::npos) << r.err;
  // Larger than any request the broker would pass to the edge: refused here, not lost there.
  std::ofstream(dir_.file("large.txt"), std::ios::binary) << std::string(4097, 'z');
  r = run({::dsekp::test::cli_path(), "edge", "send", "--broker", broker_address(), "--db",
           registry_path_, "--payload-file", dir_.file("large.txt"), "esp32-01"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("larger than 4096 bytes"), std::string::npos) << r.err;
  // The daemon still demands its options.
  r = run({::dsekp::test::cli_path(), "edge", "--db", registry_path_, "--no-csv"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--broker is required"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace dsekp::edge::testing
