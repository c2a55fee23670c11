// The edge over TLS to the broker (--tls-ca): a throwaway CA and a server certificate for
// 127.0.0.1 are made with the openssl CLI at test time, Mosquitto gets a TLS listener on a free
// loopback port beside its plain one (the scripted device uses the plain one). The edge given the
// right CA connects over TLS and processes a frame; an edge given another CA refuses the broker's
// certificate and never becomes ready.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/build_paths.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/daemon_test_support.hpp"
#include "tests/support/edge_runner.hpp"
#include "tests/support/loopback_port.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/mqtt_test_client.hpp"
#include "tests/support/registry_bed.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge::testing {
namespace {

// Runs the openssl CLI; fails the test with its output if it fails.
::testing::AssertionResult openssl(const dsekp::test::TempDir& dir, std::vector<std::string> args) {
  args.insert(args.begin(), "/usr/bin/openssl");
  const auto r = dsekp::test::run_command(args, dir.path());
  if (r.exit_code == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "openssl " << args[1] << ": " << r.err;
}

// A CA (name.crt/name.key), self-signed, P-256, valid one day.
::testing::AssertionResult make_ca(const dsekp::test::TempDir& dir, const std::string& name) {
  return openssl(dir, {"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                       "-nodes", "-keyout", dir.file(name + ".key"), "-out",
                       dir.file(name + ".crt"), "-days", "1", "-subj", "/CN=" + name});
}

TEST(EdgeBrokerTls, ConnectsOverTlsAndRefusesACertificateFromAnotherCa) {
  dsekp::test::TempDir dir;
  ASSERT_TRUE(make_ca(dir, "test-ca"));
  ASSERT_TRUE(make_ca(dir, "other-ca"));
  {
    std::ofstream ext(dir.file("server.ext"));
    ext << "subjectAltName=IP:127.0.0.1\n";
  }
  ASSERT_TRUE(openssl(
      dir, {"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
            dir.file("server.key"), "-out", dir.file("server.csr"), "-subj", "/CN=127.0.0.1"}));
  ASSERT_TRUE(
      openssl(dir, {"x509", "-req", "-in", dir.file("server.csr"), "-CA", dir.file("test-ca.crt"),
                    "-CAkey", dir.file("test-ca.key"), "-CAcreateserial", "-out",
                    dir.file("server.crt"), "-days", "1", "-extfile", dir.file("server.ext")}));

  const std::string registry_path = dir.file("registry.db");
  DeviceMaterial material;
  ASSERT_TRUE(register_device(registry_path, "esp32-01", material));
  // The TLS listener comes first; the helper adds the plain one after it (its own settings).
  const int tls_port = dsekp::test::free_loopback_port();
  ASSERT_GT(tls_port, 0);
  std::filesystem::create_directories(dir.file("broker"));
  dsekp::test::MosquittoBroker broker(
      dir.file("broker"), "allow_anonymous true\nlistener " + std::to_string(tls_port) +
                              " 127.0.0.1\ncafile " + dir.file("test-ca.crt") + "\ncertfile " +
                              dir.file("server.crt") + "\nkeyfile " + dir.file("server.key") +
                              "\n");

  const std::string tls_broker = "127.0.0.1:" + std::to_string(tls_port);
  EdgeRunner edge(
      dir, {::dsekp::test::cli_path(), "edge", "--broker", tls_broker, "--db", registry_path,
            "--no-csv", "--metrics", "off", "--no-republish", "--tls-ca", dir.file("test-ca.crt")});
  ASSERT_TRUE(edge.start()) << broker.log();
  EXPECT_NE(edge.stderr_text().find(", TLS)"), std::string::npos) << edge.stderr_text();

  dsekp::test::MqttTestClient client("esp32-01");
  ASSERT_EQ(client.connect(broker.port(), "", ""), std::optional<int>(0));
  ASSERT_EQ(client.subscribe("dsekp/init/ack/esp32-01"), std::optional<int>(1));
  ScriptedDevice device(material, 5);
  ASSERT_TRUE(client.publish(
      "dsekp/init",
      as_string(device.init(Encoding::json, static_cast<std::uint32_t>(unix_ms_now() / 1000)))));
  const auto ack = client.wait_for_message("dsekp/init/ack/esp32-01");
  ASSERT_TRUE(ack.has_value()) << edge.stderr_text();
  ASSERT_EQ(device.take_ack(bytes_of(ack->payload)), Error::ok);
  ASSERT_TRUE(client.publish("dsekp/data",
                             as_string(device.data(reading(1), unix_ms_now(), Encoding::json))));
  const std::string state = registry_path + ".state";
  EXPECT_TRUE(wait_until([&] { return count_rows(state, "SELECT count(*) FROM telemetry") == 1; },
                         std::chrono::seconds(10)))
      << edge.stderr_text();
  EXPECT_EQ(edge.terminate(), std::optional<int>(0));

  // Another CA: the broker's certificate does not verify ("A TLS error occurred."), so the
  // edge never connects.
  const std::string err = dir.file("wrong-ca.err");
  dsekp::test::ChildProcess wrong(
      {::dsekp::test::cli_path(), "edge", "--broker", tls_broker, "--db", registry_path,
       "--state-db", dir.file("other.state"), "--no-csv", "--metrics", "off", "--client-id",
       "edge-wrong-ca", "--tls-ca", dir.file("other-ca.crt")},
      dir.file("wrong-ca.out"), err);
  EXPECT_TRUE(
      wait_until([&] { return dsekp::test::read_file(err).find("TLS error") != std::string::npos; },
                 std::chrono::seconds(10)))
      << dsekp::test::read_file(err);
  EXPECT_EQ(dsekp::test::read_file(err).find("connected to"), std::string::npos)
      << dsekp::test::read_file(err);
  EXPECT_TRUE(wrong.running());

  // Bad TLS arguments are refused at start, with a message.
  const auto bad = dsekp::test::run_command(
      {::dsekp::test::cli_path(), "edge", "--broker", tls_broker, "--db", registry_path, "--no-csv",
       "--metrics", "off", "--tls-ca", dir.file("missing.crt")},
      dir.path(), std::chrono::seconds(10));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("TLS"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace dsekp::edge::testing
