// `dsekp link` as a child process: the one ready line on stdout (the contract other programs
// wait for), relaying with the given SPEC, exit 0 on SIGTERM and SIGINT with --stats-json
// written, and exit 2 with the key named for bad arguments.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>

#include "tcp_peer.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::linkemu {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

/// Waits (at most 5 s) for the ready line in `out_file`; returns the port, or 0.
std::uint16_t wait_for_ready_line(const std::string& out_file, std::string& text) {
  const std::regex ready(R"(^dsekp link: listening on 127\.0\.0\.1:(\d+)\n$)");
  for (int i = 0; i < 500; ++i) {
    text = dsekp::test::read_file(out_file);
    std::smatch m;
    if (std::regex_match(text, m, ready)) return static_cast<std::uint16_t>(std::stoul(m[1]));
    std::this_thread::sleep_for(10ms);
  }
  return 0;
}

void relay_and_stop(int stop_signal) {
  dsekp::test::TempDir dir;
  test::TcpServer server(test::echo);
  dsekp::test::ChildProcess link(
      {::dsekp::test::cli_path(), "link", "--listen", "127.0.0.1:0", "--target",
       "127.0.0.1:" + std::to_string(server.port()), "--link", "delay=10ms", "--seed", "7",
       "--stats-json", dir.file("stats.json")},
      dir.file("out"), dir.file("err"));
  std::string out;
  const std::uint16_t port = wait_for_ready_line(dir.file("out"), out);
  ASSERT_NE(port, 0) << "stdout: " << out
                     << "\nstderr: " << dsekp::test::read_file(dir.file("err"));

  {
    test::Socket client(test::connect_loopback(port));
    const auto t0 = Clock::now();
    char reply[4];
    ASSERT_TRUE(test::send_all(client.fd(), "ping", 4, 5s));
    ASSERT_TRUE(test::recv_exact(client.fd(), reply, 4, 5s));
    EXPECT_GE(Clock::now() - t0, 20ms);
  }
  link.signal(stop_signal);
  EXPECT_EQ(link.wait_for(5s), 0) << dsekp::test::read_file(dir.file("err"));
  const auto stats = nlohmann::json::parse(dsekp::test::read_file(dir.file("stats.json")));
  EXPECT_EQ(stats.at("link"), "delay=10ms");
  EXPECT_EQ(stats.at("connections_accepted"), 1);
  EXPECT_EQ(stats.at("bytes").at("upstream"), 4);
  EXPECT_EQ(stats.at("bytes").at("downstream"), 4);
  EXPECT_GE(stats.at("held").at("min_us").get<double>(), 10'000);
  EXPECT_EQ(dsekp::test::read_file(dir.file("out")), out) << "more than the one ready line";
}

TEST(LinkCli, RelaysUntilSigtermAndWritesStats) {
  relay_and_stop(SIGTERM);
}

TEST(LinkCli, SigintStopsItToo) {
  relay_and_stop(SIGINT);
}

TEST(LinkCli, BadArgumentsExitTwoAndNameTheProblem) {
  dsekp::test::TempDir dir;
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const Case cases[] = {
      {{"--listen", "127.0.0.1:0", "--target", "127.0.0.1:1883", "--link", "delay=5ms,rate=fast"},
       "--link: rate: \"fast\" is not a rate"},
      {{"--listen", "127.0.0.1:0", "--target", "127.0.0.1:1883", "--link", "loss=1%"},
       "--link: loss: \"1%\" cannot be emulated"},
      {{"--listen", "127.0.0.1:0", "--target", "127.0.0.1:0"}, "--target: \"127.0.0.1:0\""},
      {{"--listen", "localhost", "--target", "127.0.0.1:1883"}, "--listen: \"localhost\""},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv{::dsekp::test::cli_path(), "link"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    const auto r = dsekp::test::run_command(argv, dir.path().string(), 10s);
    EXPECT_EQ(r.exit_code, 2) << c.expected;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

TEST(LinkCli, PortInUseIsExitOne) {
  dsekp::test::TempDir dir;
  test::TcpServer taken(test::echo);
  const auto r = dsekp::test::run_command(
      {::dsekp::test::cli_path(), "link", "--listen", "127.0.0.1:" + std::to_string(taken.port()),
       "--target", "127.0.0.1:1883"},
      dir.path().string(), 10s);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("bind"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace dsekp::linkemu
