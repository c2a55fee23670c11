// The edge daemon's logging (edge/logging/, docs/EDGE.md "Logging"): the names of the formats and
// levels, the documented text pattern (checked on a formatted message and on the stderr of a real
// `dsekp edge` against a real Mosquitto), --log-level warn hiding info lines, rejections logged at
// warn with their reason and at a bounded rate (every rejection either a line or counted in a
// summary), bad --log-format/--log-level values refused with exit 2, log_level reloaded on
// SIGHUP, and `--log-format journald` on a host without a journal (this one): the edge starts,
// handles a frame, falls back to text lines on stderr and exits 0 on SIGTERM.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <spdlog/details/log_msg.h>

#include "edge/daemon/edge_config_file.hpp"
#include "edge/logging/edge_logger.hpp"
#include "edge/logging/journald_sink.hpp"
#include "edge/logging/log_options.hpp"
#include "edge/logging/printable.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/daemon_test_support.hpp"
#include "tests/support/edge_runner.hpp"
#include "tests/support/mosquitto_broker.hpp"
#include "tests/support/mqtt_test_client.hpp"
#include "tests/support/registry_bed.hpp"
#include "tests/support/scripted_device.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge::testing {
namespace {

using logging::LogFormat;
using logging::LogLevel;

// The documented text line (docs/EDGE.md): ISO-8601 UTC with milliseconds, [level], message.
const std::regex kTextLine(
    R"(^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.\d{3}Z \[(trace|debug|info|warn|error)\] (.+)$)");

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::size_t count_lines_with(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (const std::string& line : lines_of(text))
    if (line.find(part) != std::string::npos) ++n;
  return n;
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

// ---- names ----------------------------------------------------------------------------------

TEST(EdgeLogOptions, EveryFormatAndLevelNameRoundTrips) {
  for (const LogFormat f : {LogFormat::text, LogFormat::journald}) {
    LogFormat parsed = f == LogFormat::text ? LogFormat::journald : LogFormat::text;
    ASSERT_TRUE(logging::parse_log_format(logging::to_string(f), parsed)) << logging::to_string(f);
    EXPECT_EQ(parsed, f);
  }
  for (const LogLevel l :
       {LogLevel::trace, LogLevel::debug, LogLevel::info, LogLevel::warn, LogLevel::error}) {
    LogLevel parsed = l == LogLevel::info ? LogLevel::error : LogLevel::info;
    ASSERT_TRUE(logging::parse_log_level(logging::to_string(l), parsed)) << logging::to_string(l);
    EXPECT_EQ(parsed, l);
  }
  EXPECT_EQ(logging::to_string(LogFormat::journald), "journald");
  EXPECT_EQ(logging::to_string(LogLevel::warn), "warn");
}

TEST(EdgeLogOptions, OtherSpellingsAreRefusedAndLeaveTheValue) {
  LogFormat format = LogFormat::journald;
  for (const char* bad : {"", "Text", "TEXT", "json", "syslog", "journal", "text "})
    EXPECT_FALSE(logging::parse_log_format(bad, format)) << bad;
  EXPECT_EQ(format, LogFormat::journald);
  LogLevel level = LogLevel::debug;
  for (const char* bad : {"", "Info", "warning", "err", "critical", "off", "5"})
    EXPECT_FALSE(logging::parse_log_level(bad, level)) << bad;
  EXPECT_EQ(level, LogLevel::debug);
  EXPECT_EQ(logging::log_format_error("xml"), "expected text or journald, got \"xml\"");
  EXPECT_EQ(logging::log_level_error("loud"),
            "expected trace, debug, info, warn or error, got \"loud\"");
}

// ---- the text pattern -----------------------------------------------------------------------

std::string format_text(spdlog::level::level_enum level, const std::string& message,
                        std::chrono::milliseconds since_epoch) {
  spdlog::details::log_msg msg(spdlog::string_view_t{}, level, message);
  msg.time = spdlog::log_clock::time_point(since_epoch);
  spdlog::memory_buf_t out;
  logging::text_formatter()->format(msg, out);
  return std::string(out.data(), out.size());
}

TEST(EdgeLogText, IsIsoUtcTimestampBracketedLevelAndMessage) {
  // 1700000000.123 s after the epoch is 2023-11-14 22:13:20.123 UTC, whatever TZ says.
  const std::chrono::milliseconds t(1'700'000'000'123);
  EXPECT_EQ(format_text(spdlog::level::warn, "rejected replay on \"dsekp/data\"", t),
            "2023-11-14T22:13:20.123Z [warn] rejected replay on \"dsekp/data\"\n");
  EXPECT_EQ(format_text(spdlog::level::info, "x", t), "2023-11-14T22:13:20.123Z [info] x\n");
  EXPECT_EQ(format_text(spdlog::level::err, "x", t), "2023-11-14T22:13:20.123Z [error] x\n");
  EXPECT_EQ(format_text(spdlog::level::debug, "x", t), "2023-11-14T22:13:20.123Z [debug] x\n");
  EXPECT_EQ(format_text(spdlog::level::trace, "x", t), "2023-11-14T22:13:20.123Z [trace] x\n");
  // A whole second: the milliseconds are still three digits.
  EXPECT_EQ(format_text(spdlog::level::info, "x", std::chrono::milliseconds(1'700'000'000'000)),
            "2023-11-14T22:13:20.000Z [info] x\n");
}

TEST(EdgeLogText, NetworkTextIsEscapedSoItCannotForgeALine) {
  EXPECT_EQ(logging::printable("dsekp/data"), "dsekp/data");
  EXPECT_EQ(logging::printable("a\nb\r\x7f\\"), "a\\x0ab\\x0d\\x7f\\\\");
  EXPECT_EQ(logging::printable("h\xc3\xa9"), "h\xc3\xa9");  // UTF-8 passes
  EXPECT_EQ(logging::printable(std::string(200, 'x'), 128), std::string(128, 'x') + "...");
}

TEST(EdgeLogText, JournaldWithoutItsSocketWritesTextToStderr) {
  dsekp::test::TempDir dir;
  logging::JournaldSink sink(logging::kJournalIdentifier, dir.file("no-journal.socket"));
  ::testing::internal::CaptureStderr();
  sink.log(spdlog::details::log_msg(spdlog::string_view_t{}, spdlog::level::info, "one"));
  sink.log(spdlog::details::log_msg(spdlog::string_view_t{}, spdlog::level::err, "two"));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(sink.to_journal());
  const std::vector<std::string> lines = lines_of(err);
  ASSERT_EQ(lines.size(), 3u) << err;  // the note once, then each event
  for (const std::string& line : lines) EXPECT_TRUE(std::regex_match(line, kTextLine)) << line;
  EXPECT_NE(lines[0].find("[warn] journald socket "), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("not found"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("[info] one"), std::string::npos);
  EXPECT_NE(lines[2].find("[error] two"), std::string::npos);
}

// ---- the TOML keys --------------------------------------------------------------------------

TEST(EdgeLogConfig, TheFileSetsFormatAndLevelAndRefusesOtherValues) {
  dsekp::test::TempDir dir;
  const std::string path = dir.file("edge.toml");
  write(path, "log_format = \"journald\"\nlog_level = \"debug\"\n");
  daemon::EdgeDaemonOptions o;
  std::string broker;
  daemon::read_config_file(path, o, broker);
  EXPECT_EQ(o.log_format, LogFormat::journald);
  EXPECT_EQ(o.log_level, LogLevel::debug);

  const auto error_of = [&](const std::string& text) {
    write(path, text);
    daemon::EdgeDaemonOptions ignored;
    try {
      daemon::read_config_file(path, ignored, broker);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error_of("log_level = \"loud\"\n"),
            path + ": log_level: expected trace, debug, info, warn or error, got \"loud\"");
  EXPECT_EQ(error_of("log_format = \"xml\"\n"),
            path + ": log_format: expected text or journald, got \"xml\"");
  EXPECT_EQ(error_of("log_level = 3\n"), path + ": log_level: expected a string");
}

// ---- the daemon -----------------------------------------------------------------------------

// A broker, a registry with one device, and the flags to run the edge against them.
struct Bed {
  dsekp::test::TempDir dir;
  DeviceMaterial material;
  std::unique_ptr<dsekp::test::MosquittoBroker> broker;
  std::vector<std::string> args;

  ::testing::AssertionResult set_up() {
    const std::string registry = dir.file("registry.db");
    if (auto r = register_device(registry, "esp32-01", material); !r) return r;
    std::filesystem::create_directories(dir.file("broker"));
    broker = std::make_unique<dsekp::test::MosquittoBroker>(dir.file("broker"),
                                                            "allow_anonymous true\n");
    args = {::dsekp::test::cli_path(),
            "edge",
            "--broker",
            "127.0.0.1:" + std::to_string(broker->port()),
            "--db",
            registry,
            "--logs-dir",
            dir.file("logs"),
            "--metrics",
            "127.0.0.1:0",
            "--no-republish"};
    return ::testing::AssertionSuccess();
  }
  [[nodiscard]] std::string telemetry_db() const { return dir.file("registry.db") + ".state"; }
};

// The device's handshake, then one DATA frame (returned, for replaying).
::testing::AssertionResult handshake_and_frame(Bed& bed, dsekp::test::MqttTestClient& client,
                                               ScriptedDevice& device, std::string& frame) {
  if (client.connect(bed.broker->port(), "", "") != std::optional<int>(0))
    return ::testing::AssertionFailure() << "device cannot connect";
  const std::string ack_topic = "dsekp/init/ack/esp32-01";
  if (client.subscribe(ack_topic) != std::optional<int>(1))
    return ::testing::AssertionFailure() << "cannot subscribe";
  const auto now_s = static_cast<std::uint32_t>(unix_ms_now() / 1000);
  if (!client.publish("dsekp/init", as_string(device.init(Encoding::json, now_s))))
    return ::testing::AssertionFailure() << "cannot publish INIT";
  const auto ack = client.wait_for_message(ack_topic);
  if (!ack) return ::testing::AssertionFailure() << "no ACK";
  if (device.take_ack(bytes_of(ack->payload)) != Error::ok)
    return ::testing::AssertionFailure() << "bad ACK";
  frame = as_string(device.data(reading(0), unix_ms_now(), Encoding::json));
  if (!client.publish("dsekp/data", frame))
    return ::testing::AssertionFailure() << "cannot publish DATA";
  if (!wait_until(
          [&] { return count_rows(bed.telemetry_db(), "SELECT count(*) FROM telemetry") == 1; },
          std::chrono::seconds(10)))
    return ::testing::AssertionFailure() << "the frame was not stored";
  return ::testing::AssertionSuccess();
}

// Every line the running edge writes to stderr must be a documented text line (the one
// exception, the FAIL-STOP line written with write(2) just before _exit, is not reached here).
void expect_text_lines(const std::string& err, std::chrono::system_clock::time_point from,
                       std::chrono::system_clock::time_point to) {
  std::size_t logged = 0;
  for (const std::string& line : lines_of(err)) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, kTextLine)) << "not a text log line: " << line;
    ++logged;
    // The timestamp is UTC: read back with timegm, it falls within the run (1 s of slack for the
    // truncation to seconds).
    std::tm tm{};
    tm.tm_year = std::stoi(m[1]) - 1900;
    tm.tm_mon = std::stoi(m[2]) - 1;
    tm.tm_mday = std::stoi(m[3]);
    tm.tm_hour = std::stoi(m[4]);
    tm.tm_min = std::stoi(m[5]);
    tm.tm_sec = std::stoi(m[6]);
    const auto at = std::chrono::system_clock::from_time_t(::timegm(&tm));
    EXPECT_GE(at, from - std::chrono::seconds(1)) << line;
    EXPECT_LE(at, to + std::chrono::seconds(1)) << line;
  }
  EXPECT_GE(logged, 4u) << err;
}

TEST(EdgeLogDaemon, StderrLinesFollowTheTextPatternAndRejectionsAreWarnLines) {
  Bed bed;
  ASSERT_TRUE(bed.set_up());
  const auto started = std::chrono::system_clock::now();
  EdgeRunner edge(bed.dir, bed.args);
  ASSERT_TRUE(edge.start());
  dsekp::test::MqttTestClient client("esp32-01");
  ScriptedDevice device(bed.material, 7);
  std::string frame;
  ASSERT_TRUE(handshake_and_frame(bed, client, device, frame)) << edge.stderr_text();
  ASSERT_TRUE(client.publish("dsekp/data", frame));  // a replay
  ASSERT_TRUE(
      wait_until([&] { return edge.stderr_text().find("rejected replay") != std::string::npos; },
                 std::chrono::seconds(10)))
      << edge.stderr_text();
  EXPECT_EQ(edge.terminate(), std::optional<int>(0)) << edge.stderr_text();
  const std::string err = edge.stderr_text();

  expect_text_lines(err, started, std::chrono::system_clock::now());
  EXPECT_EQ(count_lines_with(err, "[info] metrics on http://127.0.0.1:"), 1u) << err;
  EXPECT_EQ(count_lines_with(err, "[info] registry "), 1u) << err;
  EXPECT_EQ(count_lines_with(err, "[warn] rejected replay on \"dsekp/data\""), 1u) << err;
  // The device the frame named, for an operator to grep.
  EXPECT_EQ(count_lines_with(err, "[warn] rejected replay on \"dsekp/data\" from esp32-01"), 1u)
      << err;
  EXPECT_EQ(count_lines_with(err, "[info] signal 15, stopping"), 1u) << err;
}

TEST(EdgeLogDaemon, WarnLevelHidesInfoLinesButNotRejections) {
  Bed bed;
  ASSERT_TRUE(bed.set_up());
  std::vector<std::string> args = bed.args;
  args.insert(args.end(), {"--log-level", "warn"});
  EdgeRunner edge(bed.dir, args);
  ASSERT_TRUE(edge.start());
  dsekp::test::MqttTestClient client("esp32-01");
  ScriptedDevice device(bed.material, 8);
  std::string frame;
  ASSERT_TRUE(handshake_and_frame(bed, client, device, frame)) << edge.stderr_text();
  ASSERT_TRUE(client.publish("dsekp/data", frame));
  ASSERT_TRUE(
      wait_until([&] { return edge.stderr_text().find("rejected replay") != std::string::npos; },
                 std::chrono::seconds(10)))
      << edge.stderr_text();
  EXPECT_EQ(edge.terminate(), std::optional<int>(0)) << edge.stderr_text();
  const std::string err = edge.stderr_text();
  EXPECT_EQ(count_lines_with(err, "[info]"), 0u) << err;
  EXPECT_EQ(count_lines_with(err, "[debug]"), 0u) << err;
  EXPECT_EQ(count_lines_with(err, "metrics on"), 0u) << err;
  EXPECT_EQ(count_lines_with(err, "signal 15, stopping"), 0u) << err;
  EXPECT_EQ(count_lines_with(err, "[warn] rejected replay on \"dsekp/data\""), 1u) << err;
}

TEST(EdgeLogDaemon, AFloodOfRejectionsIsLoggedAtABoundedRateAndEveryOneIsAccountedFor) {
  constexpr int kReplays = 100;
  constexpr std::size_t kPerSecond = 5;  // rejection_lines_per_second's default
  Bed bed;
  ASSERT_TRUE(bed.set_up());
  EdgeRunner edge(bed.dir, bed.args);
  ASSERT_TRUE(edge.start());
  dsekp::test::MqttTestClient client("esp32-01");
  ScriptedDevice device(bed.material, 9);
  std::string frame;
  ASSERT_TRUE(handshake_and_frame(bed, client, device, frame)) << edge.stderr_text();
  const int port = metrics_port(edge.stderr_text());
  ASSERT_GT(port, 0) << edge.stderr_text();
  const auto replays_counted = [&](int n) {
    return scrape_metrics(port).find("dsekp_rejections_total{reason=\"replay\"} " +
                                     std::to_string(n) + "\n") != std::string::npos;
  };
  const std::uint64_t first_ms = unix_ms_now();
  for (int i = 0; i < kReplays; ++i) ASSERT_TRUE(client.publish("dsekp/data", frame));
  ASSERT_TRUE(wait_until([&] { return replays_counted(kReplays); }, std::chrono::seconds(20)))
      << scrape_metrics(port);
  // One more after the second is over: the suppressed count of the last busy second is logged
  // when a rejection of the same reason arrives in a later second.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  ASSERT_TRUE(client.publish("dsekp/data", frame));
  ASSERT_TRUE(wait_until([&] { return replays_counted(kReplays + 1); }, std::chrono::seconds(10)));
  const std::uint64_t seconds_spanned = unix_ms_now() / 1000 - first_ms / 1000 + 1;
  EXPECT_EQ(edge.terminate(), std::optional<int>(0)) << edge.stderr_text();
  const std::string err = edge.stderr_text();

  std::size_t lines = 0;
  std::size_t suppressed = 0;
  std::size_t summaries = 0;
  const std::regex summary(R"(\[warn\] rejected replay: (\d+) more not logged$)");
  for (const std::string& line : lines_of(err)) {
    std::smatch m;
    if (line.find("[warn] rejected replay on \"dsekp/data\"") != std::string::npos) ++lines;
    if (std::regex_search(line, m, summary)) {
      ++summaries;
      suppressed += std::stoul(m[1]);
    }
  }
  // Bounded: at most kPerSecond lines in each second of the run, and so at least one summary
  // (100 replays would need 20 seconds of lines). The last replay is alone in its second, so it is
  // a line, and nothing is left unaccounted.
  EXPECT_LE(lines, kPerSecond * seconds_spanned) << err;
  EXPECT_GE(summaries, 1u) << err;
  EXPECT_EQ(lines + suppressed, static_cast<std::size_t>(kReplays + 1)) << err;
}

TEST(EdgeLogDaemon, BadFormatOrLevelFlagsExit2WithAClearMessage) {
  Bed bed;
  ASSERT_TRUE(bed.set_up());
  std::vector<std::string> args = bed.args;
  args.insert(args.end(), {"--log-format", "xml"});
  auto r = dsekp::test::run_command(args, bed.dir.path().string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--log-format"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("expected text or journald, got \"xml\""), std::string::npos) << r.err;

  args = bed.args;
  args.insert(args.end(), {"--log-level", "warning"});
  r = dsekp::test::run_command(args, bed.dir.path().string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--log-level"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("expected trace, debug, info, warn or error, got \"warning\""),
            std::string::npos)
      << r.err;

  // The same value in the config file: the file and key named, exit 1 like every file error.
  const std::string config = bed.dir.file("edge.toml");
  write(config, "log_level = \"loud\"\n");
  args = bed.args;
  args.insert(args.end(), {"--config", config});
  r = dsekp::test::run_command(args, bed.dir.path().string());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(config + ": log_level: expected trace, debug, info, warn or error"),
            std::string::npos)
      << r.err;
}

TEST(EdgeLogDaemon, SighupReloadsTheLevelAndReportsAFormatChange) {
  Bed bed;
  ASSERT_TRUE(bed.set_up());
  const std::string config = bed.dir.file("edge.toml");
  write(config, "log_level = \"warn\"\n");
  std::vector<std::string> args = bed.args;
  args.insert(args.end(), {"--config", config, "--ready-file", bed.dir.file("ready")});
  const std::string err_file = bed.dir.file("edge.err");
  dsekp::test::ChildProcess edge(args, bed.dir.file("edge.out"), err_file);
  ASSERT_TRUE(wait_until([&] { return std::filesystem::exists(bed.dir.file("ready")); },
                         std::chrono::seconds(10)))
      << dsekp::test::read_file(err_file);
  EXPECT_EQ(count_lines_with(dsekp::test::read_file(err_file), "[info]"), 0u)
      << dsekp::test::read_file(err_file);

  write(config, "log_level = \"debug\"\nlog_format = \"journald\"\n");
  edge.signal(SIGHUP);
  ASSERT_TRUE(wait_until(
      [&] {
        return dsekp::test::read_file(err_file).find("[info] SIGHUP: reloaded") !=
               std::string::npos;
      },
      std::chrono::seconds(10)))
      << dsekp::test::read_file(err_file);
  edge.signal(SIGTERM);
  EXPECT_EQ(edge.wait_for(std::chrono::seconds(10)), std::optional<int>(0));
  const std::string err = dsekp::test::read_file(err_file);
  EXPECT_NE(err.find("log_level debug)"), std::string::npos) << err;
  EXPECT_EQ(
      count_lines_with(err, "[warn] SIGHUP: log_format changed; it takes effect after a restart"),
      1u)
      << err;
  // Still text: the format is restart-only.
  EXPECT_EQ(count_lines_with(err, "[info] signal 15, stopping"), 1u) << err;
}

TEST(EdgeLogDaemon, JournaldWithoutAJournalStartsHandlesAFrameAndStopsCleanly) {
  if (std::filesystem::exists(logging::kJournalSocket))
    GTEST_SKIP() << "this host has a journal; the fallback is covered by the sink test";
  Bed bed;
  ASSERT_TRUE(bed.set_up());
  std::vector<std::string> args = bed.args;
  args.insert(args.end(), {"--log-format", "journald"});
  EdgeRunner edge(bed.dir, args);
  ASSERT_TRUE(edge.start());
  dsekp::test::MqttTestClient client("esp32-01");
  ScriptedDevice device(bed.material, 10);
  std::string frame;
  ASSERT_TRUE(handshake_and_frame(bed, client, device, frame)) << edge.stderr_text();
  ASSERT_TRUE(client.publish("dsekp/data", frame));
  ASSERT_TRUE(
      wait_until([&] { return edge.stderr_text().find("rejected replay") != std::string::npos; },
                 std::chrono::seconds(10)))
      << edge.stderr_text();
  EXPECT_EQ(edge.terminate(), std::optional<int>(0)) << edge.stderr_text();
  const std::string err = edge.stderr_text();
  // The fallback says so once, then every event is a text line on stderr.
  EXPECT_EQ(count_lines_with(err, "[warn] journald socket /run/systemd/journal/socket not found"),
            1u)
      << err;
  EXPECT_EQ(count_lines_with(err, "[warn] rejected replay on \"dsekp/data\""), 1u) << err;
  EXPECT_EQ(count_lines_with(err, "[info] signal 15, stopping"), 1u) << err;
  EXPECT_EQ(count_rows(bed.telemetry_db(), "SELECT count(*) FROM telemetry"), 1);
}

}  // namespace
}  // namespace dsekp::edge::testing
