// `dsekp keys serve` as a child process on a free loopback port, with a token file, and an HTTP
// client that sends the token: for the control API's own test and the dynamic-security test.
#pragma once

#include <httplib.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "child_process.hpp"
#include "loopback_port.hpp"
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
    port_ = free_loopback_port();
    std::vector<std::string> argv = {cli,
                                     "keys",
                                     "serve",
                                     "--db",
                                     db,
                                     "--listen",
                                     "127.0.0.1:" + std::to_string(port_),
                                     "--token-file",
                                     token_file_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    process_ = std::make_unique<ChildProcess>(argv, dir.file("serve.out"), err_file_);
    for (int i = 0; i < 100; ++i) {
      if (read_file(err_file_).find("listening on") != std::string::npos) return true;
      if (!process_->running()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  [[nodiscard]] httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_bearer_token_auth(kToken);
    c.set_read_timeout(20, 0);
    return c;
  }
  [[nodiscard]] httplib::Client anonymous() const { return httplib::Client("127.0.0.1", port_); }
  [[nodiscard]] std::string stderr_text() const { return read_file(err_file_); }
  [[nodiscard]] int port() const noexcept { return port_; }
  ChildProcess& process() { return *process_; }

 private:
  std::string token_file_;
  std::string err_file_;
  int port_ = 0;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace dsekp::test
