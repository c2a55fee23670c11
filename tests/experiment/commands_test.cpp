// Command lines of the experiment's children (experiment/commands.hpp) against the interfaces in
// contracts-issue4.md, the link presets (experiment/link_presets.hpp) and the private broker's
// configuration text (experiment/broker.hpp).
#include <gtest/gtest.h>

#include <algorithm>

#include "experiment/broker.hpp"
#include "experiment/commands.hpp"
#include "experiment/link_presets.hpp"
#include "experiment/net.hpp"

namespace dsekp::experiment {
namespace {

using Args = std::vector<std::string>;

/// The value after `flag`, or "<absent>".
std::string value_of(const Args& a, const std::string& flag) {
  const auto it = std::find(a.begin(), a.end(), flag);
  return it == a.end() || it + 1 == a.end() ? "<absent>" : *(it + 1);
}

bool has_flag(const Args& a, const std::string& flag) {
  return std::find(a.begin(), a.end(), flag) != a.end();
}

TEST(Commands, DeviceCommandFollowsTheContract) {
  DeviceCommand c;
  c.broker = "127.0.0.1:1884";
  c.mode = "dsekp";
  c.credentials = "/r/secrets/credentials-main.json";
  c.devices = 3;
  c.count = 6500;
  c.interval_ms = 20;
  c.logs_dir = "/r/logs/main";
  c.summary_json = "/r/devices/summary-dsekp.json";
  c.seed = 7;
  const Args a = device_argv("/bin/dsekp", c);
  EXPECT_EQ(a[0], "/bin/dsekp");
  EXPECT_EQ(a[1], "device");
  EXPECT_EQ(value_of(a, "--broker"), "127.0.0.1:1884");
  EXPECT_EQ(value_of(a, "--mode"), "dsekp");
  EXPECT_EQ(value_of(a, "--credentials"), "/r/secrets/credentials-main.json");
  EXPECT_EQ(value_of(a, "--encoding"), "json");
  EXPECT_EQ(value_of(a, "--devices"), "3");
  EXPECT_EQ(value_of(a, "--count"), "6500");
  EXPECT_EQ(value_of(a, "--interval-ms"), "20");
  EXPECT_EQ(value_of(a, "--logs-dir"), "/r/logs/main");
  EXPECT_EQ(value_of(a, "--summary-json"), "/r/devices/summary-dsekp.json");
  EXPECT_EQ(value_of(a, "--seed"), "7");
  EXPECT_EQ(value_of(a, "--qos"), "1");
  EXPECT_EQ(value_of(a, "--progress"), "off");
  // Resets only when asked (PSK refuses them), --anonymous only for an external broker.
  EXPECT_FALSE(has_flag(a, "--reset-prob"));
  EXPECT_FALSE(has_flag(a, "--reset-every"));
  EXPECT_FALSE(has_flag(a, "--anonymous"));

  c.reset_prob = 0.025;
  c.anonymous = true;
  c.progress = true;
  const Args b = device_argv("/bin/dsekp", c);
  EXPECT_EQ(value_of(b, "--reset-prob"), "0.025");
  EXPECT_TRUE(has_flag(b, "--anonymous"));
  EXPECT_EQ(value_of(b, "--progress"), "on");
  c.reset_prob = 0;
  c.reset_every = 40;
  EXPECT_EQ(value_of(device_argv("/bin/dsekp", c), "--reset-every"), "40");
}

TEST(Commands, EdgeCommandHasReadyFileAndNoMetricsPort) {
  EdgeCommand c;
  c.broker = "127.0.0.1:1883";
  c.registry_db = "/r/secrets/registry.db";
  c.state_db = "/r/secrets/edge-state-main.db";
  c.logs_dir = "/r/logs/main";
  c.ready_file = "/r/processes/edge-main.ready";
  c.client_id = "dsekp-experiment-x-main";
  const Args a = edge_argv("/bin/dsekp", c);
  EXPECT_EQ(a[1], "edge");
  EXPECT_EQ(value_of(a, "--broker"), "127.0.0.1:1883");
  EXPECT_EQ(value_of(a, "--db"), "/r/secrets/registry.db");
  EXPECT_EQ(value_of(a, "--state-db"), "/r/secrets/edge-state-main.db");
  EXPECT_EQ(value_of(a, "--logs-dir"), "/r/logs/main");
  EXPECT_EQ(value_of(a, "--metrics"), "off");
  EXPECT_EQ(value_of(a, "--ready-file"), "/r/processes/edge-main.ready");
  EXPECT_EQ(value_of(a, "--client-id"), "dsekp-experiment-x-main");
  EXPECT_FALSE(has_flag(a, "--init-burst"));  // the main runs keep the edge's defaults
  c.init_burst = 1000;
  c.init_refill_ms = 10;
  const Args t = edge_argv("/bin/dsekp", c);
  EXPECT_EQ(value_of(t, "--init-burst"), "1000");
  EXPECT_EQ(value_of(t, "--init-refill-ms"), "10");
}

TEST(Commands, LinkCommandListensOnAnyLoopbackPort) {
  LinkCommand c;
  c.target = "127.0.0.1:1883";
  c.spec = std::string(kPaperWifiSpec);
  c.seed = 3;
  c.stats_json = "/r/processes/link-stats.json";
  const Args a = link_argv("/bin/dsekp", c);
  EXPECT_EQ(a[1], "link");
  EXPECT_EQ(value_of(a, "--listen"), "127.0.0.1:0");
  EXPECT_EQ(value_of(a, "--target"), "127.0.0.1:1883");
  EXPECT_EQ(value_of(a, "--link"), kPaperWifiSpec);
  EXPECT_EQ(value_of(a, "--seed"), "3");
  EXPECT_EQ(value_of(a, "--stats-json"), "/r/processes/link-stats.json");
}

TEST(Commands, AnalyzeCommandByFolderOrByFile) {
  AnalyzeCommand main;
  main.logs_dir = "/r/logs/main";
  main.out_dir = "/r/analysis/main";
  const Args a = analyze_argv("/bin/dsekp", main);
  EXPECT_EQ(value_of(a, "--logs"), "/r/logs/main");
  EXPECT_EQ(value_of(a, "--out"), "/r/analysis/main");
  EXPECT_TRUE(has_flag(a, "--paper"));
  EXPECT_FALSE(has_flag(a, "--no-figures"));
  AnalyzeCommand trial;
  trial.dsekp_server = "/r/logs/trial/server_logs_dsekp.csv";
  trial.dsekp_client = "/r/logs/trial/client_logs_dsekp.csv";
  trial.handshakes = "/r/logs/trial/client_handshakes_dsekp.csv";
  trial.out_dir = "/r/analysis/trial";
  trial.figures = false;
  const Args b = analyze_argv("/bin/dsekp", trial);
  EXPECT_FALSE(has_flag(b, "--logs"));
  EXPECT_EQ(value_of(b, "--dsekp-server"), trial.dsekp_server);
  EXPECT_EQ(value_of(b, "--dsekp-client"), trial.dsekp_client);
  EXPECT_EQ(value_of(b, "--handshakes"), trial.handshakes);
  EXPECT_TRUE(has_flag(b, "--no-figures"));
}

TEST(Commands, ShellJoinQuotesWhatNeedsIt) {
  EXPECT_EQ(shell_join({"/bin/dsekp", "experiment", "--out", "/tmp/x"}),
            "/bin/dsekp experiment --out /tmp/x");
  EXPECT_EQ(shell_join({"a b", "it's", ""}), "'a b' 'it'\\''s' ''");
  EXPECT_EQ(shell_join({"--link", "delay=250ms,jitter=80ms,stall=0.5%"}),
            "--link delay=250ms,jitter=80ms,stall=0.5%");
}

TEST(LinkPresets, PaperWifiNoneAndCustom) {
  const LinkChoice wifi = resolve_link("paper-wifi");
  EXPECT_EQ(wifi.name, "paper-wifi");
  EXPECT_EQ(wifi.spec, "delay=275ms,jitter=65ms,stall=0.5%,stall_time=2s");
  EXPECT_NE(wifi.description.find("274"), std::string::npos);
  EXPECT_EQ(resolve_link("none").spec, "none");
  const LinkChoice custom = resolve_link("delay=10ms");
  EXPECT_EQ(custom.name, "custom");
  EXPECT_EQ(custom.spec, "delay=10ms");
  EXPECT_THROW(resolve_link(""), std::invalid_argument);
}

TEST(Net, ParsesHostPort) {
  const HostPort a = parse_host_port("127.0.0.1:1883", "--broker");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 1883);
  EXPECT_EQ(a.str(), "127.0.0.1:1883");
  EXPECT_EQ(parse_host_port("[::1]:8883", "--broker").host, "::1");
  for (const char* bad : {"", "localhost", ":1883", "host:0", "host:65536", "host:12x"}) {
    try {
      (void)parse_host_port(bad, "--broker");
      FAIL() << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--broker"), std::string::npos);
    }
  }
}

TEST(BrokerConfig, PrivateAuthenticatedLoopbackBroker) {
  MosquittoSettings s;
  s.port = 41234;
  s.password_file = "/r/secrets/broker/passwd";
  s.acl_file = "/r/secrets/broker/acl";
  s.log_file = "/r/processes/mosquitto.log";
  s.user = "someone";
  const std::string conf = mosquitto_conf(s);
  for (const char* line :
       {"listener 41234 127.0.0.1\n", "allow_anonymous false\n",
        "password_file /r/secrets/broker/passwd\n", "acl_file /r/secrets/broker/acl\n",
        "persistence false\n", "max_queued_messages 10000000\n", "set_tcp_nodelay true\n",
        "log_dest file /r/processes/mosquitto.log\n", "user someone\n"})
    EXPECT_NE(conf.find(line), std::string::npos) << "missing: " << line << "in:\n" << conf;
  // Only loopback: no other listener, no bare port line.
  EXPECT_EQ(conf.find("0.0.0.0"), std::string::npos);
  EXPECT_EQ(conf.find("\nport "), std::string::npos);
}

}  // namespace
}  // namespace dsekp::experiment
