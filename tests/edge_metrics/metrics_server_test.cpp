// The HTTP endpoint on a real loopback socket (port 0): /metrics, /healthz, 404, bind errors,
// and shutdown that finishes promptly even right after start or with an idle client connected.
// Every client call has its own timeouts; ctest's TIMEOUT bounds a hang in stop() itself.
#include "edge/metrics/metrics_server.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <stdexcept>

#include "edge/metrics/edge_metrics.hpp"
#include "edge/metrics/prometheus_text.hpp"
#include "exposition_parser.hpp"

namespace dsekp::edge::metrics {
namespace {

using Clock = std::chrono::steady_clock;

MetricsServerOptions any_port(HealthCheck health = {}) {
  MetricsServerOptions o;
  o.port = 0;
  o.health = std::move(health);
  return o;
}

httplib::Client client_for(std::uint16_t port) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(2);
  c.set_read_timeout(2);
  c.set_write_timeout(2);
  return c;
}

TEST(MetricsServer, DefaultsToLoopbackOn9464) {
  const MetricsServerOptions o;
  EXPECT_EQ(o.bind_address, "127.0.0.1");
  EXPECT_EQ(o.port, 9464);
  EXPECT_FALSE(o.health);
}

TEST(MetricsServer, ServesMetricsInTheTextFormat) {
  Registry registry;
  EdgeMetrics m = declare_edge_metrics(registry);
  m.frame(Mode::dsekp, FrameOutcome::accepted);
  m.rejection(dsekp::Error::replay);

  MetricsServer server(registry, any_port());
  std::string error;
  ASSERT_TRUE(server.start(error)) << error;
  ASSERT_NE(server.port(), 0);

  auto client = client_for(server.port());
  auto res = client.Get("/metrics");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), kTextFormatContentType);
  const auto e = testing::parse_exposition(res->body);
  ASSERT_TRUE(e.errors.empty()) << e.errors.front();
  EXPECT_EQ(e.types.size(), 12U);
  EXPECT_EQ(
      testing::find_sample(e, "dsekp_frames_total", {{"mode", "dsekp"}, {"outcome", "accepted"}}),
      1.0);
  EXPECT_EQ(testing::find_sample(e, "dsekp_rejections_total", {{"reason", "replay"}}), 1.0);
  EXPECT_TRUE(testing::find_sample(e, "dsekp_frame_processing_seconds_count").has_value());

  // A second scrape sees new values (nothing is cached between scrapes).
  m.frame(Mode::dsekp, FrameOutcome::accepted);
  res = client.Get("/metrics");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(testing::find_sample(testing::parse_exposition(res->body), "dsekp_frames_total",
                                 {{"mode", "dsekp"}, {"outcome", "accepted"}}),
            2.0);
  server.stop();
  EXPECT_EQ(server.port(), 0);
}

TEST(MetricsServer, HealthzFollowsTheHealthCheck) {
  Registry registry;
  std::atomic<bool> ready{true};
  MetricsServer server(registry, any_port([&ready] {
                         return HealthReport{ready.load(), "session store down"};
                       }));
  std::string error;
  ASSERT_TRUE(server.start(error)) << error;
  auto client = client_for(server.port());

  auto res = client.Get("/healthz");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "ok\n");

  ready = false;
  res = client.Get("/healthz");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(res->body, "not ready: session store down\n");

  ready = true;
  res = client.Get("/healthz");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
}

TEST(MetricsServer, HealthCheckThatThrowsMeansNotReady) {
  Registry registry;
  MetricsServer server(
      registry, any_port([]() -> HealthReport { throw std::runtime_error("broker unreachable"); }));
  std::string error;
  ASSERT_TRUE(server.start(error)) << error;
  auto res = client_for(server.port()).Get("/healthz");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 503);
  EXPECT_NE(res->body.find("broker unreachable"), std::string::npos) << res->body;
}

TEST(MetricsServer, UnknownPathIs404) {
  Registry registry;
  MetricsServer server(registry, any_port());
  std::string error;
  ASSERT_TRUE(server.start(error)) << error;
  auto client = client_for(server.port());
  for (const char* path : {"/", "/metrics/extra", "/health", "/favicon.ico"}) {
    auto res = client.Get(path);
    ASSERT_TRUE(res) << path << ": " << httplib::to_string(res.error());
    EXPECT_EQ(res->status, 404) << path;
  }
}

TEST(MetricsServer, ATakenPortOrForeignAddressFailsToStart) {
  Registry registry;
  MetricsServer first(registry, any_port());
  std::string error;
  ASSERT_TRUE(first.start(error)) << error;

  // httplib's default SO_REUSEPORT would let this bind succeed and split the scrapes.
  MetricsServerOptions same;
  same.port = first.port();
  MetricsServer second(registry, same);
  EXPECT_FALSE(second.start(error));
  EXPECT_NE(error.find(std::to_string(first.port())), std::string::npos) << error;
  EXPECT_EQ(second.port(), 0);

  MetricsServerOptions foreign = any_port();
  foreign.bind_address = "203.0.113.7";  // TEST-NET-3: never an address of this host
  MetricsServer third(registry, foreign);
  EXPECT_FALSE(third.start(error));

  EXPECT_FALSE(first.start(error)) << "a started server cannot start again";
}

TEST(MetricsServer, StopsPromptlyRightAfterStartAndCanRestart) {
  Registry registry;
  MetricsServer server(registry, any_port());
  std::string error;
  const auto begin = Clock::now();
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(server.start(error)) << error;
    server.stop();
  }
  EXPECT_LT(Clock::now() - begin, std::chrono::seconds(10));
  server.stop();  // idempotent

  ASSERT_TRUE(server.start(error)) << error;
  auto res = client_for(server.port()).Get("/healthz");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
}

TEST(MetricsServer, StopsPromptlyWithAnIdleClientConnected) {
  Registry registry;
  MetricsServer server(registry, any_port());
  std::string error;
  ASSERT_TRUE(server.start(error)) << error;

  // A client that connects and never sends a request holds a server thread until the timeouts.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(server.port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);

  const auto begin = Clock::now();
  server.stop();
  EXPECT_LT(Clock::now() - begin, std::chrono::seconds(4));
  ::close(fd);
}

TEST(MetricsServer, DestructorWithoutStartOrStop) {
  Registry registry;
  { MetricsServer never_started(registry, any_port()); }
  {
    MetricsServer running(registry, any_port());
    std::string error;
    ASSERT_TRUE(running.start(error)) << error;
  }  // the destructor stops and joins
  SUCCEED();
}

}  // namespace
}  // namespace dsekp::edge::metrics
