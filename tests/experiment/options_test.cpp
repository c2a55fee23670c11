// Options of `dsekp experiment` (experiment/options.hpp) and its results folder
// (experiment/results_dir.hpp): defaults, derived settings, refused combinations, and refusing to
// write into a folder that already holds something.
#include <gtest/gtest.h>

#include <fstream>

#include "experiment/options.hpp"
#include "experiment/results_dir.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::experiment {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

std::string error_of(ExperimentOptions o) {
  try {
    finalize_options(o);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Options, DefaultsFollowThePaperAtAnAcceleratedInterval) {
  ExperimentOptions o;
  finalize_options(o);
  EXPECT_EQ(o.devices, 1u);
  EXPECT_EQ(o.packets, 6500u);
  EXPECT_EQ(o.interval_ms, 20u);
  EXPECT_EQ(o.encoding, "json");
  EXPECT_TRUE(o.trial);
  EXPECT_EQ(o.trial_devices, 5u);
  // 25 resets expected over 5 x 200 frames: the middle of the paper's 20-30.
  EXPECT_DOUBLE_EQ(effective_reset_prob(o), 0.025);
  EXPECT_DOUBLE_EQ(expected_trial_resets(o), 25.0);
}

TEST(Options, PaperTimingUsesTwoSeconds) {
  ExperimentOptions o;
  o.paper_timing = true;
  finalize_options(o);
  EXPECT_EQ(o.interval_ms, 2000u);
}

TEST(Options, PaperTimingConflictsWithAnExplicitInterval) {
  ExperimentOptions o;
  o.paper_timing = true;
  o.interval_given = true;
  EXPECT_NE(error_of(o).find("--paper-timing"), std::string::npos);
}

TEST(Options, PaperWifiLinkUsesThePapersIntervalUnlessOneIsGiven) {
  ExperimentOptions o;
  o.link = "paper-wifi";
  const auto notes = finalize_options(o);
  EXPECT_EQ(o.interval_ms, 2000u);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("2000 ms"), std::string::npos) << notes[0];
  ExperimentOptions fast;
  fast.link = "paper-wifi";
  fast.interval_ms = 20;
  fast.interval_given = true;
  const auto warn = finalize_options(fast);
  EXPECT_EQ(fast.interval_ms, 20u);  // the user's choice stands, with a warning
  ASSERT_EQ(warn.size(), 1u);
  EXPECT_NE(warn[0].find("calibrated"), std::string::npos);
  ExperimentOptions custom;
  custom.link = "delay=250ms";
  EXPECT_TRUE(finalize_options(custom).empty());
  EXPECT_EQ(custom.interval_ms, 20u);
}

TEST(Options, ResetSettings) {
  ExperimentOptions o;
  o.reset_every = 40;
  EXPECT_DOUBLE_EQ(effective_reset_prob(o), 0.0);
  EXPECT_DOUBLE_EQ(expected_trial_resets(o), 25.0);  // 5 devices x floor(200 / 40)
  o.reset_prob = 0.1;
  EXPECT_NE(error_of(o).find("not both"), std::string::npos);
  o.reset_every = 0;
  EXPECT_EQ(error_of(o), "");
  EXPECT_DOUBLE_EQ(effective_reset_prob(o), 0.1);
  o.reset_prob = 1.5;
  EXPECT_NE(error_of(o).find("--reset-prob"), std::string::npos);
  // Few trial frames: the probability is capped at 1.
  ExperimentOptions few;
  few.trial_devices = 1;
  few.trial_packets = 10;
  EXPECT_DOUBLE_EQ(effective_reset_prob(few), 1.0);
}

TEST(Options, BadValuesNameTheOption) {
  ExperimentOptions o;
  o.encoding = "xml";
  EXPECT_NE(error_of(o).find("--encoding"), std::string::npos);
  o = {};
  o.devices = 0;
  EXPECT_NE(error_of(o).find("--devices"), std::string::npos);
  o = {};
  o.packets = 0;
  EXPECT_NE(error_of(o).find("--packets"), std::string::npos);
  o = {};
  o.interval_ms = 0;
  EXPECT_NE(error_of(o).find("--interval-ms"), std::string::npos);
  o = {};
  o.trial_devices = 0;
  EXPECT_NE(error_of(o).find("--trial-devices"), std::string::npos);
  o.trial = false;  // irrelevant without a trial
  EXPECT_EQ(error_of(o), "");
}

TEST(ResultsDir, RefusesANonEmptyFolderAndLeavesItAlone) {
  TempDir dir;
  const fs::path out = dir.path() / "run";
  fs::create_directories(out);
  std::ofstream(out / "earlier.csv") << "keep me\n";
  try {
    prepare_results_dir(out);
    FAIL() << "expected a refusal";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not empty"), std::string::npos) << e.what();
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(out), fs::directory_iterator()), 1);
}

TEST(ResultsDir, AcceptsAnEmptyOrMissingFolderRefusesAFile) {
  TempDir dir;
  fs::create_directories(dir.path() / "empty");
  EXPECT_NO_THROW(prepare_results_dir(dir.path() / "empty"));
  EXPECT_NO_THROW(prepare_results_dir(dir.path() / "new" / "nested"));
  EXPECT_TRUE(fs::is_directory(dir.path() / "new" / "nested"));
  std::ofstream(dir.file("a-file")) << "x";
  EXPECT_THROW(prepare_results_dir(dir.path() / "a-file"), std::runtime_error);
}

TEST(ResultsDir, DefaultFolderIsATimestampUnderResults) {
  TempDir dir;
  const auto when = std::chrono::system_clock::from_time_t(1764460800);  // 2025-11-30T00:00:00Z
  EXPECT_EQ(utc_stamp(when), "20251130T000000Z");
  EXPECT_EQ(utc_iso(when), "2025-11-30T00:00:00Z");
  const fs::path first = default_results_dir(dir.path(), when);
  EXPECT_EQ(first, dir.path() / "results" / "20251130T000000Z");
  fs::create_directories(first);
  EXPECT_EQ(default_results_dir(dir.path(), when), dir.path() / "results" / "20251130T000000Z-2");
}

TEST(ResultsDir, LayoutKeepsSecretsPrivate) {
  TempDir dir;
  const ResultsLayout layout(dir.path() / "r");
  layout.create();
  EXPECT_TRUE(fs::is_directory(layout.logs_main));
  EXPECT_TRUE(fs::is_directory(layout.logs_trial));
  EXPECT_EQ(fs::status(layout.secrets).permissions() & fs::perms::all, fs::perms::owner_all);
}

}  // namespace
}  // namespace dsekp::experiment
