// Child processes of `dsekp experiment`: the broker, the edge, the link emulator, the device
// fleets and the analysis. Each child
//   * runs in its own process group, so that Ctrl-C on the terminal reaches only the experiment,
//     which then stops its children in order (devices first, broker last) instead of all of them
//     dying at once in an arbitrary order;
//   * gets PR_SET_PDEATHSIG = SIGKILL, so that it dies if the experiment itself is SIGKILLed and
//     cannot clean up (no orphaned broker or edge left listening);
//   * starts with default signal dispositions and an empty signal mask (an experiment started in
//     the background inherits SIGINT ignored; its children must not);
//   * has stdin on /dev/null and stdout + stderr appended to one file (or to two).
// Every wait is bounded; stop() escalates SIGTERM to SIGKILL after a grace period and always
// reaps, so a child that ignores SIGTERM cannot hang the experiment.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dsekp::experiment {

struct ChildSpec {
  std::string name;               // for messages: "mosquitto", "edge (main)", ...
  std::vector<std::string> argv;  // argv[0] is an executable path (no PATH search)
  std::string output_file;        // stdout and stderr appended here; empty: /dev/null
  std::string stdout_file;        // if set, stdout goes here instead (truncated first)
};

/// How a child ended: its exit code, or 128 + the signal that killed it (as shells report it).
struct ExitStatus {
  int code = 0;
  int signal = 0;  // non-zero when killed by a signal
  [[nodiscard]] int shell_code() const noexcept { return signal != 0 ? 128 + signal : code; }
  [[nodiscard]] bool success() const noexcept { return signal == 0 && code == 0; }
  /// "exit code 1", "killed by SIGKILL".
  [[nodiscard]] std::string describe() const;
};

class Child {
 public:
  /// Forks and execs `spec`. Throws std::runtime_error naming the child if the output file cannot
  /// be opened or the exec fails (e.g. no such file), with the reason.
  explicit Child(ChildSpec spec);
  /// Stops the child (SIGTERM, then SIGKILL after 2 s) if it is still running.
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  [[nodiscard]] const std::string& name() const noexcept { return spec_.name; }
  [[nodiscard]] const ChildSpec& spec() const noexcept { return spec_; }

  /// The exit status if the child has ended (reaps it), else nothing. Never blocks.
  std::optional<ExitStatus> poll();
  /// Waits at most `timeout` for the child to end.
  std::optional<ExitStatus> wait_for(std::chrono::milliseconds timeout);
  [[nodiscard]] bool running() { return !poll().has_value(); }
  /// Sends `sig` if the child is still running.
  void send(int sig);
  /// SIGTERM; SIGKILL if it has not ended after `grace`; then waits for it (bounded, 5 s after
  /// the SIGKILL). Returns how it ended (a child that cannot be reaped reports SIGKILL).
  ExitStatus stop(std::chrono::milliseconds grace);

 private:
  ChildSpec spec_;
  pid_t pid_ = -1;
  std::optional<ExitStatus> status_;
};

/// The children of one experiment, in start order. stop_all() stops them in reverse order (the
/// last started, e.g. a device fleet, first; the broker last).
class ChildSet {
 public:
  ChildSet() = default;
  ~ChildSet();  // stop_all() with the default grace
  ChildSet(const ChildSet&) = delete;
  ChildSet& operator=(const ChildSet&) = delete;

  /// Starts a child and keeps it; the reference stays valid until it is stopped.
  Child& start(ChildSpec spec);
  /// Stops one child and forgets it (e.g. the main run's edge before the trial's).
  ExitStatus stop(Child& child, std::chrono::milliseconds grace);
  /// Stops every child, last started first. Returns how many were still running.
  std::size_t stop_all(std::chrono::milliseconds grace = std::chrono::milliseconds(5000));
  /// The first kept child that has exited, if any (for "the edge died" checks).
  Child* first_exited();
  [[nodiscard]] std::size_t size() const noexcept { return children_.size(); }

 private:
  std::vector<std::unique_ptr<Child>> children_;
};

/// The last `max_bytes` of a file (whole lines where possible), for error messages.
std::string file_tail(const std::string& path, std::size_t max_bytes = 2000);

}  // namespace dsekp::experiment
