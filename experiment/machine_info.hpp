// The machine and software an experiment ran on, for the report's "Setup" section: the paper's
// Tables 3-4 are its equivalent (ESP32 + Raspberry Pi 5, Mosquitto 2.0.18, ...).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace dsekp::experiment {

struct MachineInfo {
  std::string cpu_model;  // /proc/cpuinfo "model name"
  unsigned logical_cpus = 0;
  std::uint64_t memory_mib = 0;  // MemTotal
  std::string kernel;            // uname: "Linux 6.1.0-18-amd64 x86_64"
  std::string os;                // /etc/os-release PRETTY_NAME
  std::string dsekp_version;
  std::string compiler;
  std::string openssl;    // runtime library version (the edge's backend)
  std::string mbedtls;    // the device backend's version
  std::string mosquitto;  // "mosquitto version 2.0.11", or "external broker"
};

MachineInfo collect_machine_info();
nlohmann::ordered_json to_json(const MachineInfo& info);

}  // namespace dsekp::experiment
