// Starting and stopping a private RabbitMQ node (see rabbitmq_broker.hpp).
#include "rabbitmq_broker.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "tests/support/loopback_port.hpp"

#ifndef DSEKP_RABBITMQ_SERVER_PATH
#error "DSEKP_RABBITMQ_SERVER_PATH must name rabbitmq-server (\"\" when it is not installed)"
#endif
#ifndef DSEKP_EPMD_PATH
#error "DSEKP_EPMD_PATH must name epmd (\"\" when it is not installed)"
#endif

namespace dsekp::test {
namespace {

bool wait_for_port(int port, ChildProcess& process, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process.running()) return false;
    if (accepts_connections(port)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

}  // namespace

std::string RabbitMqBroker::executable() {
  return std::string(DSEKP_EPMD_PATH).empty() ? "" : DSEKP_RABBITMQ_SERVER_PATH;
}

RabbitMqBroker::RabbitMqBroker(const std::string& dir)
    : dir_(dir), node_("dsekp" + std::to_string(::getpid()) + "@localhost") {
  if (executable().empty()) throw std::runtime_error("rabbitmq-server is not installed");
  for (const char* sub : {"home", "mnesia", "log"})
    std::filesystem::create_directories(dir_ + "/" + sub);
  const int epmd_port = free_loopback_port();
  epmd_ = std::make_unique<ChildProcess>(
      std::vector<std::string>{DSEKP_EPMD_PATH, "-port", std::to_string(epmd_port), "-address",
                               "127.0.0.1"},
      dir_ + "/epmd.out", dir_ + "/epmd.err");
  if (!wait_for_port(epmd_port, *epmd_, std::chrono::seconds(10))) {
    stop();
    throw std::runtime_error("epmd did not start: " + read_file(dir_ + "/epmd.err"));
  }
  mqtt_port_ = free_loopback_port();
  const int dist_port = free_loopback_port();
  {
    std::ofstream conf(dir_ + "/rabbitmq.conf");
    conf << "listeners.tcp = none\n"
         << "mqtt.listeners.tcp.1 = 127.0.0.1:" << mqtt_port_ << "\n"
         << "mqtt.allow_anonymous = true\n"
         << "log.console = false\n";
    std::ofstream(dir_ + "/enabled_plugins") << "[rabbitmq_mqtt].\n";
  }
  // Everything through the environment (the script reads it); /usr/bin/env sets it for the child.
  server_ = std::make_unique<ChildProcess>(
      std::vector<std::string>{
          "/usr/bin/env", "HOME=" + dir_ + "/home", "RABBITMQ_NODENAME=" + node_,
          "RABBITMQ_NODE_IP_ADDRESS=127.0.0.1", "RABBITMQ_DIST_PORT=" + std::to_string(dist_port),
          "ERL_EPMD_PORT=" + std::to_string(epmd_port), "ERL_EPMD_ADDRESS=127.0.0.1",
          "RABBITMQ_MNESIA_BASE=" + dir_ + "/mnesia", "RABBITMQ_LOG_BASE=" + dir_ + "/log",
          "RABBITMQ_CONFIG_FILE=" + dir_ + "/rabbitmq.conf",
          "RABBITMQ_ENABLED_PLUGINS_FILE=" + dir_ + "/enabled_plugins",
          "RABBITMQ_PID_FILE=" + dir_ + "/rabbit.pid", executable()},
      dir_ + "/rabbit.out", dir_ + "/rabbit.err");
  if (!wait_for_port(mqtt_port_, *server_, std::chrono::seconds(90))) {
    const std::string text = log();
    stop();
    throw std::runtime_error("RabbitMQ did not start; its log:\n" + text);
  }
}

void RabbitMqBroker::stop() {
  // The script forwards SIGTERM to the Erlang VM and waits for it; the pid file names the VM,
  // killed directly if it outlives the script.
  const std::string pid_text = read_file(dir_ + "/rabbit.pid");
  if (server_) server_->stop(std::chrono::milliseconds(15000));
  server_.reset();
  pid_t vm = 0;
  try {
    vm = pid_text.empty() ? 0 : static_cast<pid_t>(std::stol(pid_text));
  } catch (const std::exception&) {
    vm = 0;
  }
  // Only if that pid is still our node's VM (its command line names the node), never another.
  if (vm > 1 &&
      read_file("/proc/" + std::to_string(vm) + "/cmdline").find(node_) != std::string::npos)
    ::kill(vm, SIGKILL);
  if (epmd_) epmd_->stop();
  epmd_.reset();
}

RabbitMqBroker::~RabbitMqBroker() {
  stop();
}

std::string RabbitMqBroker::log() const {
  return read_file(dir_ + "/log/" + node_ + ".log");
}

}  // namespace dsekp::test
