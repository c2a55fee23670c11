// Verdict rules (experiment/verdicts.hpp) on fixture summaries: each claim's outcome follows the
// numbers (change a number across the rule's threshold and the verdict changes), and claims the
// setup cannot test say so.
#include "experiment/verdicts.hpp"

#include <gtest/gtest.h>

#include "verdict_fixtures.hpp"

namespace dsekp::experiment {
namespace {

using fixtures::set;

struct Case {
  VerdictInputs in;
  Case() {
    in.main = fixtures::paper_like_main();
    in.trial = fixtures::good_trial();
    in.link = true;
    in.link_name = "custom";
    in.trial_resets = 25;
    in.configured_pps = 0.5;
  }
  Verdict get(const std::string& id) const {
    for (auto& v : compute_verdicts(in))
      if (v.id == id) return v;
    ADD_FAILURE() << "no verdict " << id;
    return {};
  }
  Outcome outcome(const std::string& id) const { return get(id).outcome; }
};

TEST(Verdicts, EveryClaimHasOneVerdictWithItsRule) {
  Case s;
  const auto all = compute_verdicts(s.in);
  std::vector<std::string> ids;
  for (const auto& v : all) {
    ids.push_back(v.id);
    EXPECT_FALSE(v.claim.empty());
    EXPECT_FALSE(v.paper.empty());
    EXPECT_FALSE(v.ours.empty());
    EXPECT_FALSE(v.rule.empty());
    EXPECT_FALSE(v.explanation.empty());
    const auto j = to_json(v);
    EXPECT_EQ(j["id"], v.id);
    EXPECT_EQ(j["verdict"], std::string(outcome_key(v.outcome)));
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"latency_overhead", "latency_level", "throughput",
                                           "payload_overhead", "reliability", "handshake_reinit",
                                           "handshake_latency"}));
}

TEST(Verdicts, ThePapersOwnNumbersReproduceOverALink) {
  Case s;
  for (const auto& v : compute_verdicts(s.in))
    EXPECT_EQ(v.outcome, Outcome::reproduced) << v.id << ": " << v.ours << " / " << v.explanation;
}

TEST(Verdicts, LatencyOverheadFollowsTheBandAndSignificance) {
  Case s;
  set(s.in.main, "/modes/dsekp/latency_ms/mean", 284.0);
  set(s.in.main, "/comparison/mean_latency_change_pct", 0.35);
  EXPECT_EQ(s.outcome("latency_overhead"), Outcome::not_reproduced);
  set(s.in.main, "/comparison/mean_latency_change_pct", 200.0);  // more than twice the paper's
  EXPECT_EQ(s.outcome("latency_overhead"), Outcome::not_reproduced);
  set(s.in.main, "/comparison/mean_latency_change_pct", 20.0);
  EXPECT_EQ(s.outcome("latency_overhead"), Outcome::reproduced);
  set(s.in.main, "/comparison/wilcoxon_rank_sum/p", 0.3);  // not significant
  EXPECT_EQ(s.outcome("latency_overhead"), Outcome::not_reproduced);
  EXPECT_NE(s.get("latency_overhead").explanation.find("not statistically significant"),
            std::string::npos);
}

TEST(Verdicts, LatencyOverheadOnLoopbackIsJudgedAgainstThePapersBase) {
  Case s;
  s.in.link = false;
  // 0.10 -> 0.20 ms is +100 % of a loopback latency but +0.04 % of the paper's 283 ms.
  set(s.in.main, "/modes/psk/latency_ms/mean", 0.10);
  set(s.in.main, "/modes/dsekp/latency_ms/mean", 0.20);
  set(s.in.main, "/comparison/mean_latency_change_pct", 100.0);
  const Verdict v = s.get("latency_overhead");
  EXPECT_EQ(v.outcome, Outcome::not_reproduced);
  EXPECT_NEAR(v.figures["judged_pct"].get<double>(), 0.1 / 283.0 * 100, 1e-9);
  // A protocol that really added ~77 ms per frame would reproduce even on loopback.
  set(s.in.main, "/modes/dsekp/latency_ms/mean", 77.1);
  EXPECT_EQ(s.outcome("latency_overhead"), Outcome::reproduced);
}

TEST(Verdicts, MissingModesAreNotTestable) {
  Case s;
  s.in.main = nullptr;
  s.in.trial = nullptr;
  for (const auto& v : compute_verdicts(s.in)) EXPECT_EQ(v.outcome, Outcome::not_testable) << v.id;
}

TEST(Verdicts, LatencyLevelNeedsALink) {
  Case s;
  EXPECT_EQ(s.outcome("latency_level"), Outcome::reproduced);
  set(s.in.main, "/modes/dsekp/latency_ms/p99", 1500.0);
  EXPECT_EQ(s.outcome("latency_level"), Outcome::not_reproduced);
  s.in.link = false;
  EXPECT_EQ(s.outcome("latency_level"), Outcome::not_testable);
  EXPECT_NE(s.get("latency_level").explanation.find("--link paper-wifi"), std::string::npos);
}

TEST(Verdicts, ThroughputComparesRatesAndNeedsLongEnoughRuns) {
  Case s;
  set(s.in.main, "/modes/dsekp/throughput/pps_active", 0.45);  // 10 % fewer
  EXPECT_EQ(s.outcome("throughput"), Outcome::not_reproduced);
  set(s.in.main, "/modes/dsekp/throughput/pps_active", 0.49);  // 2 %
  EXPECT_EQ(s.outcome("throughput"), Outcome::reproduced);
  set(s.in.main, "/modes/psk/throughput/active_seconds", 2);
  EXPECT_EQ(s.outcome("throughput"), Outcome::not_testable);
}

TEST(Verdicts, PayloadOverheadBandAndEncoding) {
  Case s;
  set(s.in.main, "/comparison/payload_overhead_pct", 12.2);
  EXPECT_EQ(s.outcome("payload_overhead"), Outcome::reproduced);
  set(s.in.main, "/comparison/payload_overhead_pct", 30.0);
  EXPECT_EQ(s.outcome("payload_overhead"), Outcome::not_reproduced);
  set(s.in.main, "/comparison/payload_overhead_pct", 3.0);
  EXPECT_EQ(s.outcome("payload_overhead"), Outcome::not_reproduced);
  s.in.encoding = "compact";
  EXPECT_EQ(s.outcome("payload_overhead"), Outcome::not_testable);
}

TEST(Verdicts, ReliabilityCountsEveryRun) {
  Case s;
  EXPECT_EQ(s.outcome("reliability"), Outcome::reproduced);
  // One frame of 6,500 missing: 99.98 % >= 99.8 %, but not "no missing sequence numbers".
  set(s.in.main, "/modes/psk/reliability/lost", 1);
  set(s.in.main, "/modes/psk/reliability/delivery_pct", 6499.0 / 6500 * 100);
  EXPECT_EQ(s.outcome("reliability"), Outcome::partly);
  // The trial counts too.
  set(s.in.trial, "/modes/dsekp/reliability/delivery_pct", 99.0);
  EXPECT_EQ(s.outcome("reliability"), Outcome::not_reproduced);
  Case d;
  set(d.in.main, "/modes/dsekp/reliability/duplicates", 2);
  EXPECT_EQ(d.outcome("reliability"), Outcome::not_reproduced);
  Case n;
  n.in.main["modes"]["psk"]["reliability"] = nullptr;  // no client log
  EXPECT_EQ(n.outcome("reliability"), Outcome::not_testable);
}

TEST(Verdicts, HandshakeReinitialisation) {
  Case s;
  EXPECT_EQ(s.outcome("handshake_reinit"), Outcome::reproduced);
  EXPECT_EQ(s.get("handshake_reinit").figures["reinitialisations"], 25.0);
  set(s.in.trial, "/handshakes/ok_first_attempt", 28);  // two needed a retransmitted INIT
  EXPECT_EQ(s.outcome("handshake_reinit"), Outcome::partly);
  set(s.in.trial, "/handshakes/ok", 29);  // one failed
  EXPECT_EQ(s.outcome("handshake_reinit"), Outcome::not_reproduced);
  Case few;
  few.in.trial_resets = 12;
  EXPECT_EQ(few.outcome("handshake_reinit"), Outcome::partly);
  EXPECT_NE(few.get("handshake_reinit").explanation.find("only 12 resets"), std::string::npos);
  Case none;
  none.in.trial = nullptr;
  EXPECT_EQ(none.outcome("handshake_reinit"), Outcome::not_testable);
  EXPECT_NE(none.get("handshake_reinit").explanation.find("--no-trial"), std::string::npos);
}

TEST(Verdicts, HandshakeLatencyNeedsALinkAndFallsBackToTheMainRuns) {
  Case s;
  EXPECT_EQ(s.outcome("handshake_latency"), Outcome::reproduced);
  set(s.in.trial, "/handshakes/latency_ms/mean", 560.0);  // two one-way delays of ~280 ms
  EXPECT_EQ(s.outcome("handshake_latency"), Outcome::not_reproduced);
  s.in.link = false;
  EXPECT_EQ(s.outcome("handshake_latency"), Outcome::not_testable);
  Case main_only;
  main_only.in.trial = nullptr;
  EXPECT_EQ(main_only.get("handshake_latency").figures["source"], "main runs");
  EXPECT_EQ(main_only.outcome("handshake_latency"), Outcome::reproduced);
}

TEST(Verdicts, NumberAtToleratesMissingAndNonNumbers) {
  const nlohmann::json j = {{"a", {{"b", 2.5}, {"s", "x"}, {"n", nullptr}}}};
  EXPECT_EQ(number_at(j, "/a/b"), 2.5);
  EXPECT_FALSE(number_at(j, "/a/s"));
  EXPECT_FALSE(number_at(j, "/a/n"));
  EXPECT_FALSE(number_at(j, "/a/missing/deeper"));
  EXPECT_FALSE(number_at(nullptr, "/a"));
  EXPECT_FALSE(number_at(j, "not-a-pointer"));
}

}  // namespace
}  // namespace dsekp::experiment
