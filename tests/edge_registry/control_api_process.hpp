// `dsekp keys serve` as a child process on a socket in a test directory, with a token file, and
// an HTTP client of that socket that sends the token: for the control API's own test and the
// dynamic-security test.
#pragma once

#include <httplib.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "child_process.hpp"
#include "temp_dir.hpp"

namespace dsekp::test {

class ControlApiProcess {
 public:
  static constexpr const char* kToken = "0123456789abcdef0123456789abcdef-test-token";

  /// Starts the server on `db` and waits until it answers (false if it did not).
  bool start(const TempDir& dir, const std::string& cli, const std::string& db,
             std::vector<std::string> extra = {}) {
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
  [[nodiscard]] std::string stderr_text() const { return read_file(err_file_); }
  [[nodiscard]] const std::string& socket_path() const noexcept { return socket_; }
  ChildProcess& process() { return *process_; }

 private:
  std::string token_file_;
  std::string err_file_;
  std::string socket_;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace dsekp::test
