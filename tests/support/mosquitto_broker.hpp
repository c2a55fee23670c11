// A real Mosquitto broker for one test: started from a config file written into the test's temp
// dir, listening on a free loopback port, stopped (and killed if need be) on destruction.
#pragma once

#include <memory>
#include <string>

#include "tests/support/child_process.hpp"

namespace dsekp::test {

class MosquittoBroker {
 public:
  /// Writes `dir`/mosquitto.conf: a loopback listener followed by `security_lines` (what `dsekp
  /// keys broker-config` prints), starts the broker and waits until it accepts TCP connections.
  /// Throws with the broker's log if it does not come up within 10 s. The broker drops to user
  /// `run_as` after start-up (as Debian's runs as mosquitto); empty: the test's own user.
  MosquittoBroker(const std::string& dir, const std::string& security_lines,
                  std::string run_as = {});
  ~MosquittoBroker();
  MosquittoBroker(const MosquittoBroker&) = delete;
  MosquittoBroker& operator=(const MosquittoBroker&) = delete;

  [[nodiscard]] int port() const noexcept { return port_; }
  /// SIGHUP: Mosquitto re-reads its password and ACL files.
  void reload();
  [[nodiscard]] std::string log() const;

 private:
  bool start_once(const std::string& security_lines);

  std::string dir_;
  std::string run_as_;
  int port_ = 0;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace dsekp::test
