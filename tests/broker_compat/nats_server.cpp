// Starting and stopping nats-server for a test (see nats_server.hpp).
#include "nats_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "tests/support/loopback_port.hpp"

#ifndef DSEKP_NATS_SERVER_PATH
#error "DSEKP_NATS_SERVER_PATH must name the nats-server binary (\"\" when it is not installed)"
#endif

namespace dsekp::test {
namespace {

/// The port from the log line "Listening for MQTT clients on mqtt://127.0.0.1:PORT", 0 before
/// it is there.
int logged_mqtt_port(const std::string& log) {
  const std::string marker = "Listening for MQTT clients on mqtt://127.0.0.1:";
  const auto at = log.find(marker);
  if (at == std::string::npos) return 0;
  try {
    return std::stoi(log.substr(at + marker.size()));
  } catch (const std::exception&) {
    return 0;  // the line is not complete yet
  }
}

}  // namespace

std::string NatsServer::executable() {
  return DSEKP_NATS_SERVER_PATH;
}

std::string NatsServer::version(const std::string& scratch_dir) {
  if (executable().empty()) return "";
  const RunResult r = run_command({executable(), "--version"}, scratch_dir);
  std::string v = r.out.empty() ? r.err : r.out;
  while (!v.empty() && (v.back() == '\n' || v.back() == '\r')) v.pop_back();
  return v;
}

NatsServer::NatsServer(const std::string& dir, const std::string& extra_lines)
    : dir_(dir), extra_lines_(extra_lines) {
  if (executable().empty()) throw std::runtime_error("nats-server is not installed");
  start(-1);  // -1: the server picks a free port itself, no race with another process
}

void NatsServer::start(int port) {
  const std::string conf = dir_ + "/nats.conf";
  {
    // MQTT needs a server_name and JetStream; the limits keep a test's store small. A QoS 1
    // message delivered to an edge that was killed before its PUBACK is not always sent again
    // when the edge's session resumes: NATS redelivers it after ack_wait (30 s by default), longer
    // than a test waits. 5 s, not less: with 2 s the sanitizer suite once saw the queued-order
    // probe fail, likely a redelivery to a slow client (not confirmed).
    std::ofstream out(conf);
    out << "server_name: dsekp_broker_compat\n"
        << "listen: 127.0.0.1:-1\n"
        << extra_lines_ << "\n"
        << "jetstream {\n  store_dir: \"" << dir_ << "/jetstream\"\n"
        << "  max_memory_store: 64MB\n  max_file_store: 256MB\n}\n"
        << "mqtt {\n  host: 127.0.0.1\n  port: " << port << "\n  ack_wait: \"5s\"\n}\n";
  }
  // Each start logs to its own file: the port is read from the fresh log.
  const std::string log_file = dir_ + "/nats-" + std::to_string(++starts_) + ".log";
  process_ = std::make_unique<ChildProcess>(std::vector<std::string>{executable(), "-c", conf},
                                            dir_ + "/nats.stdout", log_file);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process_->running()) break;
    mqtt_port_ = logged_mqtt_port(read_file(log_file));
    if (mqtt_port_ > 0 && accepts_connections(mqtt_port_)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  process_->stop();
  throw std::runtime_error("nats-server did not start; its log:\n" + log());
}

void NatsServer::restart() {
  const int port = mqtt_port_;
  process_->stop(std::chrono::milliseconds(5000));
  start(port);
}

NatsServer::~NatsServer() {
  if (process_) process_->stop();
}

std::string NatsServer::log() const {
  std::string all;
  for (int i = 1; i <= starts_; ++i) all += read_file(dir_ + "/nats-" + std::to_string(i) + ".log");
  return all;
}

}  // namespace dsekp::test
