// BenchProcess, BenchBroker (see bench_process.hpp).
#include "bench/edge/bench_process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <thread>
#include <utility>

extern char** environ;

namespace dsekp::bench::edge {

BenchProcess::BenchProcess(const std::vector<std::string>& argv, const std::string& log_file) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  // The child must not inherit a blocked SIGTERM (the edge waits for it with sigwait, but a
  // broker would ignore it).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  const int rc = posix_spawn(&pid_, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    pid_ = -1;
    throw std::runtime_error("cannot start " + argv[0]);
  }
}

BenchProcess::~BenchProcess() {
  stop();
}

BenchProcess::BenchProcess(BenchProcess&& other) noexcept : pid_(std::exchange(other.pid_, -1)) {}

BenchProcess& BenchProcess::operator=(BenchProcess&& other) noexcept {
  if (this != &other) {
    stop();
    pid_ = std::exchange(other.pid_, -1);
  }
  return *this;
}

bool BenchProcess::running() noexcept {
  if (pid_ <= 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

namespace {

double seconds_of(const timeval& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
}

}  // namespace

ProcessCost ProcessCost::minus(const ProcessCost& earlier) const noexcept {
  return {user_s - earlier.user_s, system_s - earlier.system_s, read_calls - earlier.read_calls,
          write_calls - earlier.write_calls};
}

bool read_system_calls(const std::string& pid, ProcessCost& cost) {
  std::ifstream io("/proc/" + pid + "/io");
  std::string key;
  std::uint64_t value = 0;
  bool reads = false;
  bool writes = false;
  while (io >> key >> value) {
    if (key == "syscr:") {
      cost.read_calls = value;
      reads = true;
    } else if (key == "syscw:") {
      cost.write_calls = value;
      writes = true;
    }
  }
  return reads && writes;
}

ProcessCost own_cost() {
  ProcessCost cost;
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  cost.user_s = seconds_of(usage.ru_utime);
  cost.system_s = seconds_of(usage.ru_stime);
  (void)read_system_calls("self", cost);
  return cost;
}

int BenchProcess::stop(std::chrono::milliseconds grace, ProcessCost* cost) noexcept {
  if (pid_ <= 0) return -1;
  ProcessCost counted;
  if (cost != nullptr) {
    try {
      (void)read_system_calls(std::to_string(pid_), counted);
    } catch (...) {  // out of memory: the counts stay 0
    }
  }
  ::kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  int status = 0;
  rusage usage{};
  while (::wait4(pid_, &status, WNOHANG, &usage) == 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid_, SIGKILL);
      ::wait4(pid_, &status, 0, &usage);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  pid_ = -1;
  if (cost != nullptr) {
    counted.user_s = seconds_of(usage.ru_utime);
    counted.system_s = seconds_of(usage.ru_stime);
    *cost = counted;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = -1;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  if (fd >= 0) ::close(fd);
  if (port <= 0) throw std::runtime_error("no free loopback port");
  return port;
}

bool wait_for_tcp(int port, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    if (ok) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

BenchBroker::BenchBroker(const std::string& mosquitto_path, const std::string& dir) {
  port_ = free_loopback_port();
  const std::string conf = dir + "/mosquitto.conf";
  {
    std::ofstream out(conf);
    out << "listener " << port_ << " 127.0.0.1\n"
        << "allow_anonymous true\n"
        << "persistence false\n"
        << "max_queued_messages 0\n"
        << "set_tcp_nodelay true\n"
        << "log_type error\n";
    // Mosquitto started as root drops to the user `mosquitto` unless told to stay as we are.
    if (const passwd* pw = ::getpwuid(::geteuid()); pw != nullptr)
      out << "user " << pw->pw_name << "\n";
    if (!out) throw std::runtime_error("cannot write " + conf);
  }
  process_ = BenchProcess({mosquitto_path, "-c", conf}, dir + "/mosquitto.log");
  if (!wait_for_tcp(port_, std::chrono::seconds(10)))
    throw std::runtime_error("mosquitto did not start (see " + dir + "/mosquitto.log)");
}

}  // namespace dsekp::bench::edge
