// The downlink journal on a real file: what it records survives a reopen, the larger seq of a
// session wins, a torn last line (an append a power cut interrupted, never acknowledged) is
// dropped while any other damage refuses the file, superseded lines are compacted away, and a
// device whose oldest sessions were dropped is marked so that none of them can seal again.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "edge/store/downlink_journal.hpp"
#include "edge/store/session_tag.hpp"
#include "tests/edge_registry/temp_dir.hpp"

namespace dsekp::edge {
namespace {

std::string tag(char c) {
  return std::string(kSessionTagChars, c);
}

std::size_t lines_in(const std::string& path) {
  std::ifstream in(path);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

TEST(DownlinkJournal, WhatItRecordsSurvivesAReopenAndTheLargerSeqWins) {
  test::TempDir dir;
  const std::string path = dir.file("downlinks");
  std::string error;
  {
    auto j = DownlinkJournal::open(path, error);
    ASSERT_NE(j, nullptr) << error;
    EXPECT_FALSE(j->floor("dev-1", tag('a')).known);
    ASSERT_TRUE(j->record("dev-1", tag('a'), 3, error)) << error;
    ASSERT_TRUE(j->record("dev-1", tag('b'), 7, error)) << error;
    ASSERT_TRUE(j->record("dev-2", tag('a'), 1, error)) << error;
    ASSERT_TRUE(j->record("dev-1", tag('a'), 2, error)) << error;  // never goes back
  }
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto j = DownlinkJournal::open(path, error);
  ASSERT_NE(j, nullptr) << error;
  EXPECT_EQ(j->floor("dev-1", tag('a')).next_seq, 3u);
  EXPECT_TRUE(j->floor("dev-1", tag('a')).known);
  EXPECT_EQ(j->floor("dev-1", tag('b')).next_seq, 7u);
  EXPECT_EQ(j->floor("dev-2", tag('a')).next_seq, 1u);
  EXPECT_FALSE(j->floor("dev-2", tag('b')).known);
  EXPECT_FALSE(j->floor("dev-2", tag('b')).forgotten);
  EXPECT_EQ(lines_in(path), 3u) << "compacted on open";
}

TEST(DownlinkJournal, ATornLastLineIsDroppedAndOtherDamageRefusesTheFile) {
  test::TempDir dir;
  const std::string path = dir.file("downlinks");
  std::ofstream(path) << "dev-1 " << tag('a') << " 5\ndev-1 " << tag('b') << " 9";  // torn
  std::string error;
  auto j = DownlinkJournal::open(path, error);
  ASSERT_NE(j, nullptr) << error;
  EXPECT_EQ(j->floor("dev-1", tag('a')).next_seq, 5u);
  EXPECT_FALSE(j->floor("dev-1", tag('b')).known);
  j.reset();
  for (const std::string& bad :
       {"dev-1 " + tag('a') + " x\n", "dev/1 " + tag('a') + " 1\n", "dev-1 " + tag('A') + " 1\n",
        std::string("dev-1 short 1\n"), "dev-1 " + tag('a') + " 4294967297\n"}) {
    std::ofstream(path) << bad << "dev-1 " << tag('a') << " 5\n";
    EXPECT_EQ(DownlinkJournal::open(path, error), nullptr) << bad;
    EXPECT_NE(error.find("line 1"), std::string::npos) << error;
  }
}

TEST(DownlinkJournal, SupersededLinesAreCompactedAway) {
  test::TempDir dir;
  const std::string path = dir.file("downlinks");
  std::string error;
  auto j = DownlinkJournal::open(path, error);
  ASSERT_NE(j, nullptr) << error;
  for (std::uint64_t seq = 1; seq <= 3000; ++seq)
    ASSERT_TRUE(j->record("dev-1", tag('c'), seq, error)) << error;
  EXPECT_LT(lines_in(path), 1100u);
  EXPECT_EQ(j->floor("dev-1", tag('c')).next_seq, 3000u);
}

TEST(DownlinkJournal, ADeviceThatLostOldSessionsIsMarkedAcrossAReopen) {
  test::TempDir dir;
  const std::string path = dir.file("downlinks");
  const auto session = [](char first, std::size_t i) {
    return std::string(kSessionTagChars - 1, first) + "0123456789abcdef"[i % 16];
  };
  std::string error;
  auto j = DownlinkJournal::open(path, error);
  ASSERT_NE(j, nullptr) << error;
  for (std::size_t i = 0; i < DownlinkJournal::kSessionsPerDevice; ++i)
    ASSERT_TRUE(j->record("dev-1", session('a', i), i + 1, error)) << error;
  EXPECT_FALSE(j->floor("dev-1", session('c', 0)).forgotten) << "nothing dropped yet";
  ASSERT_TRUE(j->record("dev-1", session('b', 0), 1, error)) << error;  // one too many
  EXPECT_FALSE(j->floor("dev-1", session('a', 0)).known) << "the oldest was dropped";
  EXPECT_TRUE(j->floor("dev-1", session('a', 0)).forgotten);
  EXPECT_TRUE(j->floor("dev-1", session('c', 0)).forgotten) << "any unknown session of it";
  EXPECT_EQ(j->floor("dev-1", session('a', 1)).next_seq, 2u);
  j.reset();
  j = DownlinkJournal::open(path, error);
  ASSERT_NE(j, nullptr) << error;
  EXPECT_TRUE(j->floor("dev-1", session('c', 0)).forgotten);
  EXPECT_EQ(j->floor("dev-1", session('b', 0)).next_seq, 1u);
  EXPECT_FALSE(j->floor("dev-2", session('c', 0)).forgotten);
}

}  // namespace
}  // namespace dsekp::edge
