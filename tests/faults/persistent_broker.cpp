// A restartable Mosquitto with persistence (see persistent_broker.hpp).
#include "persistent_broker.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "tests/support/loopback_port.hpp"

#ifndef DSEKP_MOSQUITTO_PATH
#error "DSEKP_MOSQUITTO_PATH must name the mosquitto binary"
#endif

namespace dsekp::test {

PersistentBroker::PersistentBroker(const std::string& dir, PersistentBrokerOptions options)
    : dir_(dir) {
  std::filesystem::create_directories(dir_ + "/persist");
  // The port is chosen once: a restart must come back where the clients reconnect to.
  for (int attempt = 0; attempt < 3; ++attempt) {
    port_ = free_loopback_port();
    {
      std::ofstream out(dir_ + "/mosquitto.conf");
      out << options.extra_lines << "listener " << port_ << " 127.0.0.1\n"
          << "allow_anonymous true\n"
          << "persistence true\n"
          << "persistence_location " << dir_ << "/persist/\n"
          << "autosave_interval " << options.autosave_interval << "\n"
          << "autosave_on_changes " << (options.autosave_on_changes ? "true" : "false")
          << "\n"
          // The edge's queue must not overflow while it reconnects (the default is 1000).
          << "max_queued_messages 1000000\n"
          << "set_tcp_nodelay true\n"
          << "log_dest stderr\n"
          << "log_type error\nlog_type warning\nlog_type notice\nlog_type information\n"
          << "user " << current_user() << "\n";
    }
    if (start(std::chrono::seconds(10))) return;
  }
  throw std::runtime_error("mosquitto did not start; its log:\n" + log());
}

PersistentBroker::~PersistentBroker() {
  if (process_) process_->stop();
}

bool PersistentBroker::start(std::chrono::milliseconds timeout) {
  ++starts_;
  process_ = std::make_unique<ChildProcess>(
      std::vector<std::string>{DSEKP_MOSQUITTO_PATH, "-c", dir_ + "/mosquitto.conf"},
      dir_ + "/mosquitto.stdout", dir_ + "/mosquitto-" + std::to_string(starts_) + ".log");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process_->running()) return false;  // e.g. the port was taken meanwhile
    if (accepts_connections(port_)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  process_->stop();
  return false;
}

std::optional<int> PersistentBroker::kill(int sig) {
  process_->signal(sig);
  return process_->wait_for(std::chrono::seconds(10));
}

bool PersistentBroker::restart(std::chrono::milliseconds timeout) {
  // Mosquitto sets SO_REUSEADDR, so the port is free again at once; a start that fails anyway
  // (the process exits) is retried until the deadline.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (start(left)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

bool PersistentBroker::running() {
  return process_ && process_->running();
}

std::string PersistentBroker::log() const {
  std::string out;
  for (int i = 1; i <= starts_; ++i)
    out += "--- start " + std::to_string(i) + " ---\n" +
           read_file(dir_ + "/mosquitto-" + std::to_string(i) + ".log");
  return out;
}

}  // namespace dsekp::test
