// `dsekp bench scale --cluster` run as a child process, small (30 devices, 10 s, 2 edges): three
// RabbitMQ nodes and a Redis Cluster of 3 primaries + 3 replicas started by the bench itself. It
// asserts what the bench is for: every frame exactly once over the edges' union, a
// CPU and memory reading for each of the 3 broker nodes and 6 Redis nodes (3 primaries, 3
// replicas), the cost per 1,000 frames/s of each part, Redis work and round trips per frame,
// the three fleets' counters summed, and nothing left running. Figures are not asserted (the
// machine is shared): counts, structure and bounds. Skipped without RabbitMQ.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "engines/rabbitmq_cluster.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/leftover_processes.hpp"
#include "tests/support/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

TEST(BenchE2eClusterCli, ScaleOnAClusterCountsEveryNodeAndDeliversEachFrameOnce) {
  if (dsekp::engines::RabbitMqCluster::executable().empty())
    GTEST_SKIP() << "rabbitmq-server is not installed (Debian: apt-get install rabbitmq-server)";
  dsekp::test::TempDir dir;
  const fs::path work = dir.path() / "work";
  const auto r = dsekp::test::run_command(
      {::dsekp::test::cli_path(), "bench", "scale", "--cluster", "--devices", "30", "--duration-s",
       "10", "--interval-ms", "500", "--edges", "2", "--json", "--dir", work.string()},
      dir.path().string(), 400s);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["settings"]["store"], "redis-cluster");
  EXPECT_TRUE(j["settings"]["cluster"].get<bool>());

  // Every frame the three fleets sent is in the union of the edges' logs, once.
  const auto& logs = j["logs"];
  EXPECT_TRUE(j["exactly_once"].get<bool>()) << logs.dump();
  // 30 devices x ~20 frames each (10 s every 500 ms, the first after a random start offset).
  EXPECT_GE(logs["sent"].get<int>(), 30 * 15);
  EXPECT_EQ(logs["received"], logs["sent"]);
  // The fleets' counters are summed: every device of the three fleets had its handshake.
  EXPECT_EQ(j["fleet"]["summary"]["handshakes"]["ok"].get<int>(), 30) << j["fleet"].dump();
  EXPECT_EQ(j["fleet"]["summary"]["packets_acked"].get<int>(), logs["sent"].get<int>());
  int per_edge = 0;
  for (const auto& e : j["edges"]) {
    EXPECT_GT(e["frames_logged"].get<int>(), 0) << "an edge took no frame from the queue";
    per_edge += e["frames_logged"].get<int>();
  }
  EXPECT_EQ(per_edge, logs["received"].get<int>());

  // Each node measured on its own: 3 broker VMs, 6 Redis nodes of which 3 primaries.
  const auto& cluster = j["cluster"];
  ASSERT_EQ(cluster["broker_nodes"].size(), 3u) << cluster.dump();
  for (const auto& b : cluster["broker_nodes"]) {
    EXPECT_GT(b["cpu_user_s"].get<double>() + b["cpu_sys_s"].get<double>(), 0.0);
    EXPECT_GT(b["rss_final_kib"].get<int>(), 20 * 1024) << "an Erlang VM below 20 MiB";
  }
  ASSERT_EQ(cluster["redis_nodes"].size(), 6u);
  int primaries = 0;
  for (const auto& n : cluster["redis_nodes"]) {
    primaries += n["role"] == "primary";
    EXPECT_GT(n["rss_final_kib"].get<int>(), 0);
  }
  EXPECT_EQ(primaries, 3);

  // The cost of each part per 1,000 frames/s.
  std::set<std::string> parts;
  for (const auto& c : j["cost_per_1000_frames_per_s"]) {
    parts.insert(c["part"].get<std::string>());
    EXPECT_GT(c["cores_per_1000_frames_per_s"].get<double>(), 0.0) << c.dump();
    EXPECT_GT(c["rss_final_kib_mean"].get<int>(), 0) << c.dump();
  }
  EXPECT_EQ(parts, (std::set<std::string>{"edges", "broker", "redis primaries", "redis replicas"}));

  // Redis: the commits ran on the primaries (scripts), the replicas replayed them, and a frame
  // took at least one round trip and not many.
  const auto& redis = j["redis"];
  EXPECT_GT(redis["commands"]["calls"].value("evalsha", 0), 0) << redis.dump();
  EXPECT_GT(redis["replica_commands"]["work_commands"].get<int>(), 0) << redis.dump();
  ASSERT_TRUE(redis["round_trips_per_frame"].is_number()) << redis.dump();
  EXPECT_GE(redis["round_trips_per_frame"].get<double>(), 1.0);
  EXPECT_LE(redis["round_trips_per_frame"].get<double>(), 10.0);
  EXPECT_TRUE(fs::exists(work / "logs" / "fleet-3" / "client_logs_dsekp.csv"));
  dsekp::test::expect_nothing_left(work.string());
}

}  // namespace
