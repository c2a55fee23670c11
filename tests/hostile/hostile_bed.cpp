// Bed, Streamer and the end-of-test checks (see hostile_bed.hpp).
#include "hostile_bed.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/build_paths.hpp"
#include "tests/support/registry_bed.hpp"

namespace dsekp::hostile {
namespace {

using edge::testing::wait_until;

// Unbounded queues: a broker dropping QoS 1 messages for a busy edge would make the counts
// (and the legitimate devices' losses) the broker's doing, not the edge's.
constexpr const char* kBrokerConfig =
    "allow_anonymous true\n"
    "max_queued_messages 0\n";

}  // namespace

std::string rejection(const std::string& reason) {
  return "dsekp_rejections_total{reason=\"" + reason + "\"}";
}

Metrics parse_metrics(const std::string& text) {
  Metrics out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    if (space == std::string::npos || line.compare(0, 6, "dsekp_") != 0) continue;
    try {
      out[line.substr(0, space)] = std::stod(line.substr(space + 1));
    } catch (const std::exception&) {
    }
  }
  return out;
}

Bed::Bed(const std::vector<std::string>& dev_ids, std::vector<std::string> edge_args)
    : edge_args_(std::move(edge_args)) {
  for (const std::string& id : dev_ids) {
    edge::DeviceMaterial m;
    const auto added = edge::testing::register_device(dir_.file("registry.db"), id, m);
    EXPECT_TRUE(added);
    materials_.emplace(id, std::move(m));
  }
}

Bed::~Bed() {
  if (edge_ && alive()) edge_->terminate();
}

::testing::AssertionResult Bed::start() {
  std::filesystem::create_directories(dir_.file("broker"));
  broker_ = std::make_unique<dsekp::test::MosquittoBroker>(dir_.file("broker"), kBrokerConfig);
  std::vector<std::string> argv = {::dsekp::test::cli_path(),
                                   "edge",
                                   "--broker",
                                   "127.0.0.1:" + std::to_string(port()),
                                   "--db",
                                   dir_.file("registry.db"),
                                   "--logs-dir",
                                   dir_.file("logs"),
                                   "--metrics",
                                   "127.0.0.1:0",
                                   "--no-republish"};
  argv.insert(argv.end(), edge_args_.begin(), edge_args_.end());
  edge_ = std::make_unique<edge::testing::EdgeRunner>(dir_, argv);
  if (auto up = edge_->start(); !up) return up;
  return after_start();
}

::testing::AssertionResult Bed::restart() {
  const auto status = edge_->terminate();
  if (status != std::optional<int>(0))
    return ::testing::AssertionFailure() << "edge did not exit 0 on SIGTERM: " << edge_stderr();
  if (auto up = edge_->start(); !up) return up;
  return after_start();
}

::testing::AssertionResult Bed::after_start() {
  // The ready file holds the pid; the metrics port is on stderr (bound to port 0).
  std::string text = dsekp::test::read_file(dir_.file("edge.ready"));
  try {
    pid_ = static_cast<pid_t>(std::stol(text));
  } catch (const std::exception&) {
    return ::testing::AssertionFailure() << "ready file without a pid: '" << text << "'";
  }
  metrics_port_ = edge::testing::metrics_port(edge_->stderr_text());
  if (metrics_port_ <= 0)
    return ::testing::AssertionFailure() << "no metrics port: " << edge_->stderr_text();
  if (!wait_until([&] { return healthy(); }, std::chrono::seconds(10)))
    return ::testing::AssertionFailure() << "/healthz never answered 200";
  return ::testing::AssertionSuccess();
}

const edge::DeviceMaterial& Bed::material(const std::string& dev_id) const {
  return materials_.at(dev_id);
}

Metrics Bed::metrics() const {
  return parse_metrics(http_get(metrics_port_, "/metrics"));
}

bool Bed::healthy() const {
  const std::string answer = http_get(metrics_port_, "/healthz");
  return answer.rfind("HTTP/1.1 200", 0) == 0 || answer.rfind("HTTP/1.0 200", 0) == 0;
}

bool Bed::alive() const {
  if (pid_ <= 0 || ::kill(pid_, 0) != 0) return false;
  const std::string stat = dsekp::test::read_file("/proc/" + std::to_string(pid_) + "/stat");
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z' &&
         stat[close + 2] != 'X';
}

long Bed::rss_kb() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

namespace {
double rejection_sum(const Metrics& m) {
  double sum = 0;
  for (const auto& [series, value] : m)
    if (series.rfind("dsekp_rejections_total{", 0) == 0) sum += value;
  return sum;
}
}  // namespace

::testing::AssertionResult Bed::wait_rejections(const Metrics& before, double n,
                                                std::chrono::seconds timeout) const {
  const double target = rejection_sum(before) + n;
  double seen = 0;
  if (wait_until(
          [&] {
            seen = rejection_sum(metrics());
            return seen >= target;
          },
          timeout))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "rejections " << seen - rejection_sum(before) << " of " << n << "\n"
         << edge_stderr();
}

::testing::AssertionResult Bed::wait_metric(const std::string& series, double value,
                                            std::chrono::seconds timeout) const {
  double seen = 0;
  if (wait_until(
          [&] {
            const Metrics m = metrics();
            const auto it = m.find(series);
            seen = it == m.end() ? 0 : it->second;
            return seen >= value;
          },
          timeout))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << series << " = " << seen << ", waited for " << value;
}

std::map<std::string, int> Bed::telemetry(const std::string& dev_id) const {
  std::map<std::string, int> out;
  sqlite3* db = nullptr;
  const std::string path = dir_.file("registry.db") + ".state";
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 2000);
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db,
                           "SELECT plaintext FROM telemetry WHERE mode = 'dsekp' AND dev_id = ?",
                           -1, &s, nullptr) == SQLITE_OK) {
      sqlite3_bind_text(s, 1, dev_id.c_str(), -1, SQLITE_TRANSIENT);
      while (sqlite3_step(s) == SQLITE_ROW)
        ++out[std::string(static_cast<const char*>(sqlite3_column_blob(s, 0)),
                          static_cast<std::size_t>(sqlite3_column_bytes(s, 0)))];
    }
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
  return out;
}

std::map<std::string, int> Bed::csv(const std::string& dev_id) const {
  std::map<std::string, int> out;
  const auto rows = edge::testing::parse_csv(
      dsekp::test::read_file(dir_.file("logs") + "/server_logs_dsekp.csv"));
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (rows[i].size() == 15u && rows[i][2] == dev_id) ++out[rows[i][7]];
  return out;
}

double delta(const Metrics& before, const Metrics& after, const std::string& series) {
  const auto a = after.find(series);
  const auto b = before.find(series);
  return (a == after.end() ? 0 : a->second) - (b == before.end() ? 0 : b->second);
}

::testing::AssertionResult rejection_deltas_are(const Metrics& before, const Metrics& after,
                                                const std::map<std::string, double>& expected) {
  std::ostringstream wrong;
  for (const auto& [series, value] : after) {
    if (series.rfind("dsekp_rejections_total{", 0) != 0) continue;
    const std::string reason =
        series.substr(series.find('"') + 1, series.rfind('"') - series.find('"') - 1);
    const auto it = expected.find(reason);
    const double want = it == expected.end() ? 0 : it->second;
    const double got = delta(before, after, series);
    if (got != want) wrong << "  " << reason << ": delta " << got << ", expected " << want << "\n";
  }
  for (const auto& [reason, value] : expected)
    if (after.find(rejection(reason)) == after.end())
      wrong << "  " << reason << ": no such series\n";
  if (wrong.str().empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "rejection deltas differ:\n" << wrong.str();
}

Streamer::Streamer(const edge::DeviceMaterial& material, std::uint64_t seed, int port)
    : device_(material, seed), client_(device_.dev_id()) {
  EXPECT_EQ(client_.connect(port, "", ""), std::optional<int>(0));
}

Streamer::~Streamer() {
  stop();
}

::testing::AssertionResult Streamer::handshake(std::uint32_t t) {
  const std::string ack_topic = "dsekp/init/ack/" + dev_id();
  if (client_.subscribe(ack_topic) != std::optional<int>(1))
    return ::testing::AssertionFailure() << "subscribe " << ack_topic;
  if (!client_.publish("dsekp/init", device_.init(t, Encoding::compact)))
    return ::testing::AssertionFailure() << "publish INIT";
  const auto ack = client_.wait_for_message(ack_topic);
  if (!ack) return ::testing::AssertionFailure() << dev_id() << ": no ACK";
  if (const Error e = device_.take_ack(ack->payload); e != Error::ok)
    return ::testing::AssertionFailure() << dev_id() << ": ACK refused: " << error_name(e);
  return ::testing::AssertionSuccess();
}

void Streamer::start() {
  thread_ = std::thread([this] {
    for (int i = 0; i < kMaxFrames && !stop_.load(); ++i) {
      const std::string reading =
          R"({"legit":")" + dev_id() + R"(","i":)" + std::to_string(i) + "}";
      const Encoding enc = i % 2 == 0 ? Encoding::json : Encoding::compact;
      Error sealed = Error::ok;
      const std::string frame = device_.data(reading, unix_ms(), enc, nullptr, &sealed);
      if (sealed != Error::ok || !client_.publish("dsekp/data", frame)) {
        failed_ = true;
        return;
      }
      sent_.push_back(reading);
      ++sent_count_;
      std::this_thread::sleep_for(std::chrono::milliseconds(4));
    }
  });
}

std::vector<std::string> Streamer::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  return sent_;
}

std::size_t Streamer::acks_received() const {
  std::size_t n = 0;
  for (const auto& m : client_.received())
    if (m.topic == "dsekp/init/ack/" + dev_id()) ++n;
  return n;
}

::testing::AssertionResult start_streamers(Bed& bed, const std::vector<std::string>& dev_ids,
                                           std::vector<std::unique_ptr<Streamer>>& out,
                                           std::uint32_t t) {
  std::uint64_t seed = 7000;
  for (const std::string& id : dev_ids) {
    out.push_back(std::make_unique<Streamer>(bed.material(id), ++seed, bed.port()));
    if (auto ok = out.back()->handshake(t == 0 ? unix_s() : t); !ok) return ok;
  }
  for (auto& s : out) s->start();
  // Each has a confirmed session before the attack starts.
  for (auto& s : out)
    if (!wait_until([&] { return !bed.telemetry(s->dev_id()).empty(); }, std::chrono::seconds(10)))
      return ::testing::AssertionFailure() << s->dev_id() << ": no frame stored";
  return ::testing::AssertionSuccess();
}

void expect_streamers_lost_nothing(Bed& bed, std::vector<std::unique_ptr<Streamer>>& streamers) {
  for (auto& s : streamers) {
    const std::vector<std::string> sent = s->stop();
    EXPECT_FALSE(s->failed()) << s->dev_id() << " could not send";
    EXPECT_GE(sent.size(), 20u) << s->dev_id() << " streamed too little to prove anything";
    EXPECT_EQ(s->acks_received(), 1u) << s->dev_id() << " needed another handshake";
    std::map<std::string, int> want;
    for (const std::string& r : sent) ++want[r];
    // The CSV lines of a batch are appended just after its commit: wait for both records.
    const bool all = wait_until(
        [&] {
          return bed.telemetry(s->dev_id()).size() >= want.size() &&
                 bed.csv(s->dev_id()).size() >= want.size();
        },
        std::chrono::seconds(30));
    EXPECT_TRUE(all) << s->dev_id() << ": " << bed.telemetry(s->dev_id()).size() << " of "
                     << want.size() << " stored";
    EXPECT_EQ(bed.telemetry(s->dev_id()), want) << s->dev_id() << " telemetry";
    EXPECT_EQ(bed.csv(s->dev_id()), want) << s->dev_id() << " CSV";
  }
}

::testing::AssertionResult handshake_over(AsyncMqttClient& link, HostileDevice& device,
                                          const std::string& init, std::string* ack) {
  const std::string topic = "dsekp/init/ack/" + device.dev_id();
  const std::size_t before = link.messages(topic).size();
  if (!link.publish("dsekp/init", init)) return ::testing::AssertionFailure() << "publish INIT";
  if (!link.wait_for_messages(topic, before + 1))
    return ::testing::AssertionFailure() << device.dev_id() << ": no ACK";
  const std::string payload = link.messages(topic)[before].payload;
  if (ack != nullptr) *ack = payload;
  if (const Error e = device.take_ack(payload); e != Error::ok)
    return ::testing::AssertionFailure() << device.dev_id() << ": ACK refused: " << error_name(e);
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult send_and_wait(Bed& bed, AsyncMqttClient& link, const std::string& dev_id,
                                         const std::vector<std::string>& frames,
                                         std::size_t stored) {
  for (const std::string& f : frames)
    if (!link.publish("dsekp/data", f)) return ::testing::AssertionFailure() << "publish DATA";
  if (!wait_until([&] { return bed.telemetry(dev_id).size() >= stored; }, std::chrono::seconds(20)))
    return ::testing::AssertionFailure()
           << dev_id << ": " << bed.telemetry(dev_id).size() << " of " << stored << " stored\n"
           << bed.edge_stderr();
  return ::testing::AssertionSuccess();
}

void expect_edge_healthy(const Bed& bed) {
  EXPECT_TRUE(bed.alive()) << bed.edge_stderr();
  EXPECT_TRUE(bed.healthy());
}

}  // namespace dsekp::hostile
