// Child processes: fork/exec with a process group, a parent-death signal and redirected output
// (see process.hpp).
#include "process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace dsekp::experiment {
namespace {

int open_or_throw(const std::string& name, const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0600);
  if (fd < 0)
    throw std::runtime_error("cannot start " + name + ": cannot open " + path + ": " +
                             std::strerror(errno));
  return fd;
}

void close_if_open(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

/// In the forked child: only async-signal-safe calls from here to execv.
[[noreturn]] void exec_child(char* const* argv, pid_t parent, int in_fd, int out_fd, int err_fd,
                             int report_fd) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The parent may have died between fork() and prctl(): then nobody would kill us.
  if (::getppid() != parent) ::_exit(127);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2})
    ::sigaction(sig, &dfl, nullptr);
  if (::dup2(in_fd, 0) < 0 || ::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0) {
    const int e = errno;
    (void)!::write(report_fd, &e, sizeof e);
    ::_exit(127);
  }
  ::execv(argv[0], argv);
  const int e = errno;
  (void)!::write(report_fd, &e, sizeof e);
  ::_exit(127);
}

}  // namespace

std::string ExitStatus::describe() const {
  if (signal != 0) {
    const char* name = ::strsignal(signal);
    return "killed by signal " + std::to_string(signal) +
           (name ? std::string(" (") + name + ")" : "");
  }
  if (code < 0) return "ended (status unknown: it could not be waited for)";
  return "exit code " + std::to_string(code);
}

Child::Child(ChildSpec spec) : spec_(std::move(spec)) {
  if (spec_.argv.empty() || spec_.argv[0].empty())
    throw std::invalid_argument("cannot start " + spec_.name + ": empty command");
  // Everything the forked child uses is prepared here: between fork() and exec() a
  // multi-threaded parent's child may only make async-signal-safe calls (no allocation).
  std::vector<char*> argv;
  for (auto& a : spec_.argv) argv.push_back(a.data());
  argv.push_back(nullptr);

  int in_fd = -1, out_fd = -1, stdout_fd = -1;
  int report[2] = {-1, -1};
  try {
    in_fd = open_or_throw(spec_.name, "/dev/null", O_RDONLY);
    out_fd = open_or_throw(spec_.name, spec_.output_file.empty() ? "/dev/null" : spec_.output_file,
                           O_WRONLY | O_CREAT | O_APPEND);
    if (!spec_.stdout_file.empty())
      stdout_fd = open_or_throw(spec_.name, spec_.stdout_file, O_WRONLY | O_CREAT | O_TRUNC);
    if (::pipe2(report, O_CLOEXEC) != 0)
      throw std::runtime_error("cannot start " + spec_.name + ": pipe: " + std::strerror(errno));
  } catch (...) {
    close_if_open(in_fd);
    close_if_open(out_fd);
    close_if_open(stdout_fd);
    throw;
  }

  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ == 0)
    exec_child(argv.data(), parent, in_fd, stdout_fd >= 0 ? stdout_fd : out_fd, out_fd, report[1]);
  const int fork_errno = errno;
  close_if_open(in_fd);
  close_if_open(out_fd);
  close_if_open(stdout_fd);
  close_if_open(report[1]);
  if (pid_ < 0) {
    close_if_open(report[0]);
    throw std::runtime_error("cannot start " + spec_.name + ": fork: " + std::strerror(fork_errno));
  }
  // Also from the parent, so that the group exists before we might signal it (no race with the
  // child's own setpgid). EACCES after the exec is harmless: the child did it already.
  (void)::setpgid(pid_, pid_);

  // The report pipe closes on a successful exec (O_CLOEXEC) or carries the exec's errno.
  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(report[0], &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  close_if_open(report[0]);
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    (void)wait_for(std::chrono::milliseconds(2000));
    throw std::runtime_error("cannot start " + spec_.name + ": " + spec_.argv[0] + ": " +
                             std::strerror(child_errno));
  }
}

Child::~Child() {
  if (pid_ > 0 && !status_) (void)stop(std::chrono::milliseconds(2000));
}

std::optional<ExitStatus> Child::poll() {
  if (status_ || pid_ <= 0) return status_;
  int st = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &st, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    ExitStatus s;
    if (WIFSIGNALED(st)) {
      s.signal = WTERMSIG(st);
    } else {
      s.code = WEXITSTATUS(st);
    }
    status_ = s;
  } else if (r < 0) {
    status_ = ExitStatus{-1, 0};  // not our child any more: nothing left to wait for
  }
  return status_;
}

std::optional<ExitStatus> Child::wait_for(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!poll()) {
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return status_;
}

void Child::send(int sig) {
  if (running()) ::kill(pid_, sig);
}

ExitStatus Child::stop(std::chrono::milliseconds grace) {
  if (auto s = poll()) return *s;
  ::kill(pid_, SIGTERM);
  if (auto s = wait_for(grace)) return *s;
  // The whole group: also anything the child started and left behind.
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  if (auto s = wait_for(std::chrono::milliseconds(5000))) return *s;
  status_ = ExitStatus{0, SIGKILL};  // unreapable (e.g. stuck in the kernel): stop waiting
  return *status_;
}

ChildSet::~ChildSet() {
  stop_all();
}

Child& ChildSet::start(ChildSpec spec) {
  children_.push_back(std::make_unique<Child>(std::move(spec)));
  return *children_.back();
}

ExitStatus ChildSet::stop(Child& child, std::chrono::milliseconds grace) {
  const ExitStatus status = child.stop(grace);
  std::erase_if(children_, [&](const auto& c) { return c.get() == &child; });
  return status;
}

std::size_t ChildSet::stop_all(std::chrono::milliseconds grace) {
  std::size_t running = 0;
  for (auto it = children_.rbegin(); it != children_.rend(); ++it) {
    if ((*it)->running()) ++running;
    (void)(*it)->stop(grace);
  }
  children_.clear();
  return running;
}

Child* ChildSet::first_exited() {
  for (auto& c : children_)
    if (!c->running()) return c.get();
  return nullptr;
}

std::string file_tail(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff start = size > static_cast<std::streamoff>(max_bytes)
                                   ? size - static_cast<std::streamoff>(max_bytes)
                                   : 0;
  in.seekg(start);
  std::string text(static_cast<std::size_t>(size - start), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (start > 0) {
    const auto nl = text.find('\n');
    if (nl != std::string::npos && nl + 1 < text.size()) text.erase(0, nl + 1);
  }
  return text;
}

}  // namespace dsekp::experiment
