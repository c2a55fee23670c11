// The downlink journal on a real file: what it records survives a reopen, the larger seq of a
// session wins, a torn last line (an append a power cut interrupted, never acknowledged) is
// dropped while any other damage refuses the file, superseded lines are compacted away, and a
// device whose oldest sessions were dropped is marked so that none of them can seal again.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <fstream>
#include <string>

#include "edge/store/downlink_journal.hpp"
#include "edge/store/session_tag.hpp"
#include "tests/support/temp_dir.hpp"

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

// The tag is a stored name (journal lines, Redis fields written by earlier runs): its spelling
// must not change. Known answer from Python: hashlib.sha256(label + key + iv).hexdigest()[:32].
TEST(SessionTag, IsTheFirstSixteenBytesOfSha256InLowercaseHex) {
  std::array<std::uint8_t, 16> key{};
  std::array<std::uint8_t, 12> iv{};
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<std::uint8_t>(i);
  for (std::size_t i = 0; i < iv.size(); ++i) iv[i] = static_cast<std::uint8_t>(16 + i);
  DirectionKeys keys;
  keys.key = AeadKey::from(key);
  keys.iv_base = IvBase::from(iv);
  EXPECT_EQ(session_tag("dsekp downlink journal", keys), "ce5f373f637fb030f38f18beee2e9d3e");
}

TEST(DownlinkJournal, WhatItRecordsSurvivesAReopenAndTheLargerSeqWins) {
  test::TempDir dir;
  const std::string path = dir.file("downlinks");
  std::string error;
  {
    auto j = DownlinkJournal::open(path, error);
    ASSERT_NE(j, nullptr) << error;
    EXPECT_FALSE(j->floor("dev-1", tag('a'), 0).known);
    ASSERT_TRUE(j->record("dev-1", tag('a'), 3, 0, error)) << error;
    ASSERT_TRUE(j->record("dev-1", tag('b'), 7, 0, error)) << error;
    ASSERT_TRUE(j->record("dev-2", tag('a'), 1, 0, error)) << error;
    ASSERT_TRUE(j->record("dev-1", tag('a'), 2, 0, error)) << error;  // never goes back
  }
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto j = DownlinkJournal::open(path, error);
  ASSERT_NE(j, nullptr) << error;
  EXPECT_EQ(j->floor("dev-1", tag('a'), 0).next_seq, 3u);
  EXPECT_TRUE(j->floor("dev-1", tag('a'), 0).known);
  EXPECT_EQ(j->floor("dev-1", tag('b'), 0).next_seq, 7u);
  EXPECT_EQ(j->floor("dev-2", tag('a'), 0).next_seq, 1u);
  EXPECT_FALSE(j->floor("dev-2", tag('b'), 0).known);
  EXPECT_FALSE(j->floor("dev-2", tag('b'), 0).forgotten);
  EXPECT_EQ(lines_in(path), 3u) << "compacted on open";
}

// Two writers would each append seqs the other does not know, so after a state rollback both
// could seal the same one: a second open of a journal in use is refused (flock, which also
// holds between two opens in one process), and the lock goes with the first journal.
TEST(DownlinkJournal, ASecondOpenWhileTheFirstLivesIsRefused) {
  test::TempDir dir;
  const std::string path = dir.file("downlinks");
  std::string error;
  auto first = DownlinkJournal::open(path, error);
  ASSERT_NE(first, nullptr) << error;
  EXPECT_EQ(DownlinkJournal::open(path, error), nullptr);
  EXPECT_NE(error.find("in use by another process"), std::string::npos) << error;
  // The same journal through a symlink meets the same lock.
  ASSERT_EQ(::symlink(path.c_str(), dir.file("alias").c_str()), 0);
  EXPECT_EQ(DownlinkJournal::open(dir.file("alias"), error), nullptr);
  first.reset();
  EXPECT_NE(DownlinkJournal::open(path, error), nullptr) << error;
}

TEST(DownlinkJournal, ATornLastLineIsDroppedAndOtherDamageRefusesTheFile) {
  test::TempDir dir;
  const std::string path = dir.file("downlinks");
  std::ofstream(path) << "dev-1 " << tag('a') << " 5 0\ndev-1 " << tag('b') << " 9";  // torn
  std::string error;
  auto j = DownlinkJournal::open(path, error);
  ASSERT_NE(j, nullptr) << error;
  EXPECT_EQ(j->floor("dev-1", tag('a'), 0).next_seq, 5u);
  EXPECT_FALSE(j->floor("dev-1", tag('b'), 0).known);
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
    ASSERT_TRUE(j->record("dev-1", tag('c'), seq, 0, error)) << error;
  EXPECT_LT(lines_in(path), 1100u);
  EXPECT_EQ(j->floor("dev-1", tag('c'), 0).next_seq, 3000u);
}

// Dropping a device's oldest session leaves a watermark: an unknown session created no later
// than the dropped one may be that one (it must not seal); a session created after it has keys
// no dropped entry was about (it seals from its stored seq) and is recorded as usual.
TEST(DownlinkJournal, ADroppedSessionLeavesAWatermarkThatNewerSessionsPass) {
  test::TempDir dir;
  const std::string path = dir.file("downlinks");
  const auto session = [](char first, std::size_t i) {
    return std::string(kSessionTagChars - 1, first) + "0123456789abcdef"[i % 16];
  };
  std::string error;
  auto j = DownlinkJournal::open(path, error);
  ASSERT_NE(j, nullptr) << error;
  // Sessions created at 1000, 2000, ... ms.
  for (std::size_t i = 0; i < DownlinkJournal::kSessionsPerDevice; ++i)
    ASSERT_TRUE(j->record("dev-1", session('a', i), i + 1, (i + 1) * 1000, error)) << error;
  EXPECT_FALSE(j->floor("dev-1", session('c', 0), 500).forgotten) << "nothing dropped yet";
  ASSERT_TRUE(j->record("dev-1", session('b', 0), 1, 20'000, error)) << error;  // one too many
  EXPECT_FALSE(j->floor("dev-1", session('a', 0), 1000).known) << "the oldest was dropped";
  EXPECT_TRUE(j->floor("dev-1", session('a', 0), 1000).forgotten);
  EXPECT_TRUE(j->floor("dev-1", session('c', 0), 900).forgotten) << "as old: maybe dropped";
  EXPECT_FALSE(j->floor("dev-1", session('c', 0), 1001).forgotten) << "newer: cannot be";
  EXPECT_EQ(j->floor("dev-1", session('a', 1), 2000).next_seq, 2u);
  // Many more sessions later the device still gets downlinks under its new ones.
  for (std::size_t i = 0; i < 40; ++i) {
    const std::uint64_t created = 30'000 + i * 1000;
    EXPECT_FALSE(j->floor("dev-1", session('d' + static_cast<char>(i / 16), i), created).forgotten)
        << i;
    ASSERT_TRUE(j->record("dev-1", session('d' + static_cast<char>(i / 16), i), 1, created, error))
        << error;
  }
  j.reset();
  j = DownlinkJournal::open(path, error);
  ASSERT_NE(j, nullptr) << error;
  EXPECT_TRUE(j->floor("dev-1", session('c', 0), 40'000).forgotten) << "the watermark moved";
  EXPECT_FALSE(j->floor("dev-1", session('c', 0), 100'000).forgotten);
  EXPECT_FALSE(j->floor("dev-2", session('c', 0), 0).forgotten);
}

// A journal that exists but cannot be read is refused, never taken for an empty one.
TEST(DownlinkJournal, AnUnreadableJournalIsRefused) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads any file";
  test::TempDir dir;
  const std::string path = dir.file("downlinks");
  std::ofstream(path) << "dev-1 " << tag('a') << " 5 0\n";
  ASSERT_EQ(::chmod(path.c_str(), 0), 0);
  std::string error;
  EXPECT_EQ(DownlinkJournal::open(path, error), nullptr);
  EXPECT_NE(error.find("open"), std::string::npos) << error;
}

}  // namespace
}  // namespace dsekp::edge
