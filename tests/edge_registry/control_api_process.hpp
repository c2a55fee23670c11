// `dsekp keys serve` as a child process on a socket in a test directory, with a token file, and
// an HTTP client of that socket that sends the token: for the control API's own test and the
// dynamic-security test.
#pragma once

#include <httplib.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/child_process.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::test {

class ControlApiProcess {
 public:
  static constexpr const char* kToken = "0123456789abcdef0123456789abcdef-test-token";

  /// Starts the server on `db` and waits until it answers (false if it did not).
  bool start(const TempDir& dir, const std::string& cli, const std::string& db,
             std::vector<std::string> extra = {}) {
    // A refused request is answered before its body is read and the connection closed: a write
    // of the body after that is EPIPE, which must fail a request, not kill the test process
    // (and leave the server running).
    ::signal(SIGPIPE, SIG_IGN);
    token_file_ = dir.file("api-token");
    std::ofstream(token_file_) << kToken << "\n";
    ::chmod(token_file_.c_str(), 0600);
    err_file_ = dir.file("serve.err");
    socket_ = dir.file("api.sock");
    std::vector<std::string> argv = {cli,        "keys",  "serve",        "--db",     db,
                                     "--listen", socket_, "--token-file", token_file_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    process_ = std::make_unique<ChildProcess>(argv, dir.file("serve.out"), err_file_);
    for (int i = 0; i < 100; ++i) {
      if (read_file(err_file_).find("listening on") != std::string::npos) return true;
      if (!process_->running()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  /// A client of the socket, with the token (`token` false: without).
  [[nodiscard]] httplib::Client client(bool token = true) const {
    httplib::Client c(socket_);
    c.set_address_family(AF_UNIX);
    if (token) c.set_bearer_token_auth(kToken);
    c.set_read_timeout(20, 0);
    return c;
  }
  [[nodiscard]] httplib::Client anonymous() const { return client(false); }
  /// Sends `request` as it is (say, headers announcing a body that never comes) and returns the
  /// server's answer: once its head and its Content-Length of body have come, or the server has
  /// closed, or after 20 s of silence. Without an answer it returns why, in parentheses (for the
  /// failure message). An answer proves the server did not wait for the body.
  [[nodiscard]] std::string raw_exchange(const std::string& request) const {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket_.c_str());
    std::string answer;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      answer = std::string("(connect failed: ") + std::strerror(errno) + ")";
    } else if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
               static_cast<ssize_t>(request.size())) {
      answer = std::string("(send failed: ") + std::strerror(errno) + ")";
    } else {
      timeval timeout{20, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
      char buf[4096];
      ssize_t n = 0;
      while (!complete_answer(answer) && (n = ::recv(fd, buf, sizeof buf, 0)) > 0)
        answer.append(buf, static_cast<std::size_t>(n));
      if (answer.empty())
        answer = n == 0 ? "(closed without an answer)"
                        : std::string("(no answer: ") + std::strerror(errno) + ")";
    }
    ::close(fd);
    return answer;
  }
  /// Whether `answer` holds a whole HTTP response: its head, and as much body as its
  /// Content-Length says (none if it says nothing).
  static bool complete_answer(const std::string& answer) {
    const std::size_t head_end = answer.find("\r\n\r\n");
    if (head_end == std::string::npos) return false;
    std::size_t body = 0;
    const std::string head = answer.substr(0, head_end);
    for (const char* name : {"Content-Length: ", "content-length: "})
      if (const std::size_t at = head.find(name); at != std::string::npos)
        body = std::strtoul(head.c_str() + at + std::strlen(name), nullptr, 10);
    return answer.size() >= head_end + 4 + body;
  }
  [[nodiscard]] std::string stderr_text() const { return read_file(err_file_); }
  /// The log once it holds `line` (the server logs a request after answering it), or after 5 s.
  [[nodiscard]] std::string log_with(const std::string& line) const {
    for (int i = 0; i < 100 && stderr_text().find(line) == std::string::npos; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return stderr_text();
  }
  [[nodiscard]] const std::string& socket_path() const noexcept { return socket_; }
  ChildProcess& process() { return *process_; }

 private:
  std::string token_file_;
  std::string err_file_;
  std::string socket_;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace dsekp::test
