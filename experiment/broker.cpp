// The private Mosquitto broker (see broker.hpp).
#include "broker.hpp"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "edge/mqtt/mqtt_limits.hpp"
#include "interrupt.hpp"

namespace dsekp::experiment {

std::string mosquitto_conf(const MosquittoSettings& s) {
  std::ostringstream out;
  out << "# Private broker of `dsekp experiment` (generated; docs/EXPERIMENT.md).\n"
      << "# Only reachable on loopback; every client logs in (devices as their dev_id, the edge\n"
      << "# as its own account) and the ACL limits each to its topics.\n"
      << "per_listener_settings false\n"
      << "allow_anonymous false\n"
      << "password_file " << s.password_file << "\n"
      << "acl_file " << s.acl_file << "\n"
      << "listener " << s.port
      << " 127.0.0.1\n"
      // As `dsekp keys broker-config` sets them: no client can take another's client id, and
      // no packet larger than any DSEKP packet gets in.
      << "use_username_as_clientid true\n"
      << "max_packet_size " << edge::mqtt::kMaxMqttPacketSize << "\n"
      << "persistence false\n"
      << "max_queued_messages " << s.max_queued_messages << "\n"
      << "max_queued_bytes 0\n"
      // Nagle's algorithm on the broker's sockets would add delayed-ACK waits (tens of ms) to
      // single small frames on loopback, which the latency comparison would then measure.
      << "set_tcp_nodelay true\n"
      << "log_dest file " << s.log_file << "\n"
      << "log_type error\nlog_type warning\nlog_type notice\nlog_type information\n"
      << "log_timestamp true\n"
      << "log_timestamp_format %Y-%m-%dT%H:%M:%S\n";
  if (!s.user.empty()) out << "user " << s.user << "\n";
  return out.str();
}

std::string find_mosquitto() {
  for (const char* p : {"/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"})
    if (::access(p, X_OK) == 0) return p;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
      const std::string candidate = dir + "/mosquitto";
      if (!dir.empty() && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
  }
  throw std::runtime_error(
      "mosquitto not found in /usr/sbin, /usr/local/sbin or PATH: install it (`make deps`, or "
      "apt-get install mosquitto), or use an existing broker with --broker HOST:PORT");
}

std::string current_user_name() {
  const passwd* pw = ::getpwuid(::geteuid());
  return pw != nullptr ? pw->pw_name : "";
}

std::string mosquitto_version(const std::string& mosquitto, const std::string& scratch_file) {
  try {
    Child child(ChildSpec{"mosquitto -h", {mosquitto, "-h"}, scratch_file, {}});
    if (!child.wait_for(std::chrono::seconds(5))) return "unknown";
    std::ifstream in(scratch_file);
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("mosquitto version", 0) == 0) return line;
  } catch (const std::exception&) {
  }
  return "unknown";
}

StartedBroker start_mosquitto(ChildSet& children, const std::string& mosquitto,
                              MosquittoSettings settings, const std::string& conf_file,
                              const std::string& output_file, std::chrono::milliseconds timeout) {
  std::string last_failure;
  for (int attempt = 0; attempt < 3; ++attempt) {
    last_failure.clear();
    settings.port = free_loopback_port();
    {
      std::ofstream out(conf_file, std::ios::trunc);
      out << mosquitto_conf(settings);
      if (!out) throw std::runtime_error("cannot write " + conf_file);
    }
    Child& child =
        children.start(ChildSpec{"mosquitto", {mosquitto, "-c", conf_file}, output_file, {}});
    const HostPort address{"127.0.0.1", settings.port};
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      throw_if_interrupted();
      if (auto status = child.poll()) {
        last_failure = "it ended (" + status->describe() + ")";
        break;  // most likely the port was taken meanwhile: try another
      }
      if (accepts_tcp(address)) return {&child, address, conf_file};
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (last_failure.empty()) last_failure = "it did not accept connections in time";
    (void)children.stop(child, std::chrono::seconds(2));
  }
  throw std::runtime_error("mosquitto did not start: " + last_failure + ". Its log (" +
                           settings.log_file + "):\n" + file_tail(settings.log_file) +
                           file_tail(output_file));
}

}  // namespace dsekp::experiment
