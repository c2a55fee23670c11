// Starting and stopping a Mosquitto broker for a test (see mosquitto_broker.hpp).
#include "tests/support/mosquitto_broker.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include "tests/support/loopback_port.hpp"

#ifndef DSEKP_MOSQUITTO_PATH
#error "DSEKP_MOSQUITTO_PATH must name the mosquitto binary"
#endif

namespace dsekp::test {

MosquittoBroker::MosquittoBroker(const std::string& dir, const std::string& security_lines,
                                 std::string run_as)
    : dir_(dir), run_as_(run_as.empty() ? current_user() : std::move(run_as)) {
  for (int attempt = 0; attempt < 3; ++attempt)
    if (start_once(security_lines)) return;
  throw std::runtime_error("mosquitto did not start; its log:\n" + log());
}

bool MosquittoBroker::start_once(const std::string& security_lines) {
  port_ = free_loopback_port();
  const std::string conf = dir_ + "/mosquitto.conf";
  {
    std::ofstream out(conf);
    // The security lines after the listener, as `dsekp keys broker-config` asks: some of them
    // (use_username_as_clientid) are the listener's own.
    out << "listener " << port_ << " 127.0.0.1\n"
        << security_lines << "persistence false\n"
        << "set_tcp_nodelay true\n"
        << "log_dest stderr\n"
        << "log_type all\n"
        << "user " << run_as_ << "\n";
  }
  process_ =
      std::make_unique<ChildProcess>(std::vector<std::string>{DSEKP_MOSQUITTO_PATH, "-c", conf},
                                     dir_ + "/mosquitto.stdout", dir_ + "/mosquitto.log");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process_->running()) return false;  // e.g. the port was taken meanwhile
    if (accepts_connections(port_)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  process_->stop();
  return false;
}

MosquittoBroker::~MosquittoBroker() {
  if (process_) process_->stop();
}

void MosquittoBroker::reload() {
  process_->signal(SIGHUP);
}

std::string MosquittoBroker::log() const {
  return read_file(dir_ + "/mosquitto.log");
}

}  // namespace dsekp::test
