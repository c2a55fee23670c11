// Child process management of the experiment (experiment/process.hpp): a child that ignores
// SIGTERM is killed, children stop in reverse start order, a child dies with its parent
// (PR_SET_PDEATHSIG), starts with default signal handling, and exec failures are reported.
#include "experiment/process.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "tests/support/temp_dir.hpp"

namespace dsekp::experiment {
namespace {

using namespace std::chrono_literals;
using test::TempDir;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// True once `pid` no longer runs (gone, or a zombie nobody reaped yet).
bool gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string line;
  std::getline(stat, line);
  const auto paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

bool gone_within(pid_t pid, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!gone(pid)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

/// Waits (bounded) until `path` holds a line and returns it as a number.
pid_t read_pid_file(const std::string& path) {
  for (int i = 0; i < 500; ++i) {
    std::ifstream in(path);
    long pid = 0;
    if (in >> pid && pid > 0) return static_cast<pid_t>(pid);
    std::this_thread::sleep_for(10ms);
  }
  return -1;
}

TEST(Process, ChildIgnoringSigtermIsKilledAfterTheGrace) {
  TempDir dir;
  const std::string pid_file = dir.file("grandchild.pid");
  // The shell ignores SIGTERM, and so does the sleep it starts (an ignored signal stays ignored
  // across exec): only SIGKILL ends them.
  Child child(ChildSpec{
      "stubborn",
      {"/bin/sh", "-c", "trap '' TERM; sleep 30 & echo $! > " + pid_file + "; wait; sleep 30"},
      dir.file("out.log"),
      {}});
  const pid_t grandchild = read_pid_file(pid_file);
  ASSERT_GT(grandchild, 0);
  const auto start = std::chrono::steady_clock::now();
  const ExitStatus status = child.stop(300ms);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(status.signal, SIGKILL) << status.describe();
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 5s);
  EXPECT_FALSE(child.running());
  // The whole process group got the SIGKILL: the grandchild is gone too.
  EXPECT_TRUE(gone_within(grandchild, 3s));
}

TEST(Process, WellBehavedChildEndsOnSigterm) {
  TempDir dir;
  Child child(ChildSpec{"sleep", {"/bin/sleep", "30"}, dir.file("out.log"), {}});
  EXPECT_TRUE(child.running());
  const ExitStatus status = child.stop(5s);
  EXPECT_EQ(status.signal, SIGTERM);
  EXPECT_EQ(status.shell_code(), 128 + SIGTERM);
  EXPECT_FALSE(status.success());
}

TEST(Process, ReportsExitCodeAndRedirectsOutput) {
  TempDir dir;
  Child child(ChildSpec{"sh",
                        {"/bin/sh", "-c", "echo to-stdout; echo to-stderr >&2; exit 3"},
                        dir.file("both.log"),
                        {}});
  const auto status = child.wait_for(5s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->code, 3);
  EXPECT_EQ(status->describe(), "exit code 3");
  const std::string log = slurp(dir.file("both.log"));
  EXPECT_NE(log.find("to-stdout"), std::string::npos);
  EXPECT_NE(log.find("to-stderr"), std::string::npos);
}

TEST(Process, SeparateStdoutFile) {
  TempDir dir;
  Child child(ChildSpec{"sh",
                        {"/bin/sh", "-c", "echo first-line; echo diagnostics >&2"},
                        dir.file("err.log"),
                        dir.file("out.txt")});
  ASSERT_TRUE(child.wait_for(5s));
  EXPECT_EQ(slurp(dir.file("out.txt")), "first-line\n");
  EXPECT_EQ(slurp(dir.file("err.log")), "diagnostics\n");
}

TEST(Process, ExecFailureThrowsWithTheReason) {
  TempDir dir;
  try {
    Child child(ChildSpec{"missing", {dir.file("no-such-program")}, dir.file("out.log"), {}});
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cannot start missing"), std::string::npos) << what;
    EXPECT_NE(what.find("No such file"), std::string::npos) << what;
  }
}

TEST(Process, UnwritableOutputFileThrows) {
  TempDir dir;
  EXPECT_THROW(Child(ChildSpec{"x", {"/bin/true"}, dir.file("no/such/dir/out.log"), {}}),
               std::runtime_error);
}

TEST(Process, ChildSetStopsInReverseStartOrder) {
  TempDir dir;
  const std::string order = dir.file("order");
  {
    ChildSet set;
    for (const char* name : {"a", "b", "c"}) {
      const std::string ready = dir.file(std::string(name) + ".ready");
      set.start(ChildSpec{name,
                          {"/bin/sh", "-c",
                           std::string("trap 'echo ") + name + " >> " + order +
                               "; exit 0' TERM; touch " + ready + "; while :; do sleep 0.05; done"},
                          dir.file(std::string(name) + ".log"),
                          {}});
      // Each must have installed its trap before the next starts and before the stop.
      for (int i = 0; i < 500 && !std::ifstream(ready); ++i) std::this_thread::sleep_for(10ms);
    }
    EXPECT_EQ(set.size(), 3u);
    EXPECT_EQ(set.stop_all(5s), 3u);
    EXPECT_EQ(set.size(), 0u);
  }
  EXPECT_EQ(slurp(order), "c\nb\na\n");
}

TEST(Process, ChildSetFindsAnExitedChild) {
  TempDir dir;
  ChildSet set;
  set.start(ChildSpec{"long", {"/bin/sleep", "30"}, dir.file("l.log"), {}});
  Child& quick = set.start(ChildSpec{"quick", {"/bin/true"}, dir.file("q.log"), {}});
  ASSERT_TRUE(quick.wait_for(5s));
  EXPECT_EQ(set.first_exited(), &quick);
  (void)set.stop(quick, 1s);
  EXPECT_EQ(set.first_exited(), nullptr);
  EXPECT_EQ(set.size(), 1u);
}

TEST(Process, ChildDiesWithItsParent) {
  TempDir dir;
  const std::string pid_file = dir.file("child.pid");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  // An intermediate process plays the experiment: it starts a child, then is SIGKILLed (no
  // chance to clean up). PR_SET_PDEATHSIG must take the child down with it.
  const pid_t parent = ::fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    try {
      Child child(ChildSpec{"orphan-to-be", {"/bin/sleep", "30"}, dir.file("c.log"), {}});
      std::ofstream(pid_file) << child.pid() << "\n";
      const char byte = 1;
      (void)!::write(ready[1], &byte, 1);
      ::pause();
    } catch (...) {
    }
    ::_exit(1);
  }
  ::close(ready[1]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::close(ready[0]);
  const pid_t child = read_pid_file(pid_file);
  ASSERT_GT(child, 0);
  EXPECT_FALSE(gone(child));
  ::kill(parent, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(parent, &status, 0), parent);
  EXPECT_TRUE(gone_within(child, 5s)) << "pid " << child << " outlived its parent";
}

TEST(Process, ChildStartsWithDefaultSignalHandling) {
  TempDir dir;
  // An experiment started in the background inherits SIGINT ignored; its children must not.
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ASSERT_EQ(::sigaction(SIGINT, &ignore, &old), 0);
  Child child(ChildSpec{"sleep", {"/bin/sleep", "30"}, dir.file("out.log"), {}});
  ::sigaction(SIGINT, &old, nullptr);
  child.send(SIGINT);
  const auto status = child.wait_for(5s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->signal, SIGINT);
}

TEST(Process, FileTailKeepsWholeLines) {
  TempDir dir;
  {
    std::ofstream out(dir.file("log"));
    for (int i = 0; i < 1000; ++i) out << "line " << i << "\n";
  }
  const std::string tail = file_tail(dir.file("log"), 100);
  EXPECT_LE(tail.size(), 100u);
  EXPECT_EQ(tail.rfind("line 999\n"), tail.size() - 9);
  EXPECT_EQ(tail.rfind("line ", 0), 0u) << tail;  // starts at a line start
  EXPECT_EQ(file_tail(dir.file("missing")), "");
}

}  // namespace
}  // namespace dsekp::experiment
