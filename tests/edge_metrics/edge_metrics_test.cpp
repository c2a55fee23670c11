// The edge's declared metric set: names, types, every rejection reason, no per-device label,
// and that each handle increments exactly its own series.
#include "edge/metrics/edge_metrics.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>

#include "edge/metrics/prometheus_text.hpp"
#include "exposition_parser.hpp"

namespace dsekp::edge::metrics {
namespace {

class EdgeMetricsTest : public ::testing::Test {
 protected:
  testing::Exposition scrape() const {
    auto e = testing::parse_exposition(write_text(registry_.collect()));
    EXPECT_TRUE(e.errors.empty()) << e.errors.front();
    return e;
  }
  double value(std::string_view name,
               const std::vector<std::pair<std::string, std::string>>& labels = {}) const {
    const auto v = testing::find_sample(scrape(), name, labels);
    EXPECT_TRUE(v.has_value()) << name;
    return v.value_or(-1);
  }

  Registry registry_;
  EdgeMetrics m_ = declare_edge_metrics(registry_);
};

TEST_F(EdgeMetricsTest, DeclaresTheIssuesMetricSet) {
  std::map<std::string, std::string> types;
  for (const auto& [name, type] : scrape().types) types[name] = type;
  const std::map<std::string, std::string> expected{
      {"dsekp_active_sessions", "gauge"},
      {"dsekp_build_info", "gauge"},
      {"dsekp_burst_messages_total", "counter"},
      {"dsekp_bursts_total", "counter"},
      {"dsekp_frame_processing_seconds", "histogram"},
      {"dsekp_frames_total", "counter"},
      {"dsekp_handshakes_total", "counter"},
      {"dsekp_rejections_total", "counter"},
      {"dsekp_ratchet_steps_total", "counter"},
      {"dsekp_rekey_requests_total", "counter"},
      {"dsekp_sessions_confirmed_total", "counter"},
      {"dsekp_sessions_evicted_total", "counter"},
  };
  EXPECT_EQ(types, expected);
  EXPECT_EQ(value("dsekp_build_info", {{"version", DSEKP_EXPECTED_VERSION}}), 1.0);
  EXPECT_EQ(build_version(), DSEKP_EXPECTED_VERSION);
}

TEST_F(EdgeMetricsTest, EverySeriesIsPresentFromTheStartAtZero) {
  for (const char* o : {"accepted", "retransmitted", "rejected"}) {
    EXPECT_EQ(value("dsekp_handshakes_total", {{"outcome", o}}), 0.0) << o;
  }
  for (const char* mode : {"dsekp", "psk"}) {
    for (const char* o : {"accepted", "rejected"}) {
      EXPECT_EQ(value("dsekp_frames_total", {{"mode", mode}, {"outcome", o}}), 0.0);
    }
  }
  EXPECT_EQ(value("dsekp_frame_processing_seconds_bucket", {{"le", "5e-06"}}), 0.0);
  EXPECT_EQ(value("dsekp_frame_processing_seconds_bucket", {{"le", "0.1"}}), 0.0);
  EXPECT_EQ(value("dsekp_frame_processing_seconds_bucket", {{"le", "+Inf"}}), 0.0);
}

TEST_F(EdgeMetricsTest, RejectionReasonsAreEveryErrorButOkPlusTheEdgeReasons) {
  std::set<std::string> reasons;
  for (const auto& s : scrape().samples) {
    if (s.name == "dsekp_rejections_total") reasons.insert(s.labels.at(0).second);
  }
  std::set<std::string> expected{"unknown_topic", "mode_disabled", "retained_message",
                                 "corrupt_state", "secret_erased", "registry_failure",
                                 "store_failure", "sink_failure",  "internal_error"};
  for (std::uint8_t e = 1; e < dsekp::kErrorCount; ++e) {
    expected.insert(dsekp::error_name(static_cast<dsekp::Error>(e)));
  }
  EXPECT_EQ(reasons, expected);
  EXPECT_FALSE(reasons.contains("ok"));
  EXPECT_FALSE(reasons.contains("protocol_error"));  // counted under the Error's own name
  EXPECT_TRUE(reasons.contains("unknown_device"));   // an Error name
  // No name is both an Error name and an edge reason: one series each, in one list.
  EXPECT_EQ(rejection_reasons().size(), expected.size());
  EXPECT_EQ(reasons.size(),
            static_cast<std::size_t>(dsekp::kErrorCount - 1) + kEdgeReasonCount - 2);
}

TEST_F(EdgeMetricsTest, NamesArePrefixedAndNoLabelCanNameADevice) {
  const auto e = scrape();
  for (const auto& [name, type] : e.types) EXPECT_TRUE(name.starts_with(kMetricPrefix)) << name;
  const std::set<std::string> allowed{"outcome", "mode", "reason", "le", "version"};
  for (const auto& s : e.samples) {
    for (const auto& [label, v] : s.labels) EXPECT_TRUE(allowed.contains(label)) << label;
  }
}

TEST_F(EdgeMetricsTest, HandlesIncrementTheirOwnSeries) {
  m_.handshake(HandshakeOutcome::accepted);
  m_.handshake(HandshakeOutcome::retransmitted);
  m_.handshake(HandshakeOutcome::retransmitted);
  m_.frame(Mode::psk, FrameOutcome::rejected);
  m_.frame(Mode::dsekp, FrameOutcome::accepted);
  m_.frame(Mode::dsekp, FrameOutcome::accepted);
  m_.rejection(dsekp::Error::replay);
  m_.rejection(dsekp::Error::unknown_device);
  m_.rejection(EdgeReason::sink_failure);
  m_.rejection(EdgeReason::ok);                    // not a rejection: ignored
  m_.rejection(EdgeReason::protocol_error);        // counted by its Error: ignored here
  m_.rejection(dsekp::Error::ok);                  // not a rejection: ignored
  m_.rejection(static_cast<dsekp::Error>(200));    // out of range: ignored
  m_.handshake(static_cast<HandshakeOutcome>(7));  // out of range: ignored
  m_.frame(static_cast<Mode>(9), FrameOutcome::accepted);
  m_.session_confirmed();
  m_.session_evicted();
  m_.session_evicted();
  m_.set_active_sessions(42);
  m_.frame_processed(std::chrono::microseconds(3));
  m_.frame_processed(std::chrono::microseconds(30));
  m_.frame_processed(std::chrono::seconds(1));

  EXPECT_EQ(value("dsekp_handshakes_total", {{"outcome", "accepted"}}), 1.0);
  EXPECT_EQ(value("dsekp_handshakes_total", {{"outcome", "retransmitted"}}), 2.0);
  EXPECT_EQ(value("dsekp_handshakes_total", {{"outcome", "rejected"}}), 0.0);
  EXPECT_EQ(value("dsekp_frames_total", {{"mode", "psk"}, {"outcome", "rejected"}}), 1.0);
  EXPECT_EQ(value("dsekp_frames_total", {{"mode", "psk"}, {"outcome", "accepted"}}), 0.0);
  EXPECT_EQ(value("dsekp_frames_total", {{"mode", "dsekp"}, {"outcome", "accepted"}}), 2.0);
  EXPECT_EQ(value("dsekp_rejections_total", {{"reason", "replay"}}), 1.0);
  EXPECT_EQ(value("dsekp_rejections_total", {{"reason", "unknown_device"}}), 1.0);
  EXPECT_EQ(value("dsekp_rejections_total", {{"reason", "sink_failure"}}), 1.0);
  EXPECT_EQ(value("dsekp_rejections_total", {{"reason", "store_failure"}}), 0.0);
  double total_rejections = 0;
  for (const auto& s : scrape().samples) {
    if (s.name == "dsekp_rejections_total") total_rejections += s.value;
  }
  EXPECT_EQ(total_rejections, 3.0);
  EXPECT_EQ(value("dsekp_sessions_confirmed_total"), 1.0);
  EXPECT_EQ(value("dsekp_sessions_evicted_total"), 2.0);
  EXPECT_EQ(value("dsekp_active_sessions"), 42.0);
  EXPECT_EQ(value("dsekp_frame_processing_seconds_bucket", {{"le", "5e-06"}}), 1.0);
  EXPECT_EQ(value("dsekp_frame_processing_seconds_bucket", {{"le", "5e-05"}}), 2.0);
  EXPECT_EQ(value("dsekp_frame_processing_seconds_bucket", {{"le", "0.1"}}), 2.0);
  EXPECT_EQ(value("dsekp_frame_processing_seconds_count"), 3.0);
  EXPECT_NEAR(value("dsekp_frame_processing_seconds_sum"), 1.000033, 1e-12);
}

TEST_F(EdgeMetricsTest, RejectionCounterByName) {
  // For code with its own reason enum: look the series up by name once, at set-up.
  EXPECT_EQ(m_.rejection_counter("replay"),
            m_.rejections_by_error[static_cast<std::size_t>(dsekp::Error::replay)]);
  EXPECT_EQ(m_.rejection_counter("internal_error"),
            m_.rejections_by_edge_reason[static_cast<std::size_t>(EdgeReason::internal_error)]);
  EXPECT_EQ(m_.rejection_counter("unknown_device"),
            m_.rejections_by_error[static_cast<std::size_t>(dsekp::Error::unknown_device)]);
  EXPECT_EQ(m_.rejection_counter("protocol_error"), nullptr);
  EXPECT_EQ(m_.rejection_counter("ok"), nullptr);
  EXPECT_EQ(m_.rejection_counter("dev-42"), nullptr);
  for (const std::string& r : rejection_reasons()) EXPECT_NE(m_.rejection_counter(r), nullptr);
}

TEST_F(EdgeMetricsTest, DeclaringTwiceInOneRegistryIsRefused) {
  EXPECT_THROW((void)declare_edge_metrics(registry_), std::invalid_argument);
}

}  // namespace
}  // namespace dsekp::edge::metrics
