// Machine and software facts for the report (see machine_info.hpp).
#include "machine_info.hpp"

#include <mbedtls/version.h>
#include <openssl/crypto.h>
#include <sys/utsname.h>

#include <fstream>
#include <thread>

#ifndef DSEKP_VERSION
#define DSEKP_VERSION "unknown"
#endif

namespace dsekp::experiment {
namespace {

/// The value after "key" and a separator (':' or '=') on the first matching line of `path`.
std::string file_value(const std::string& path, const std::string& key, char separator) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const auto sep = line.find(separator);
    if (sep == std::string::npos) continue;
    std::string value = line.substr(sep + 1);
    const auto first = value.find_first_not_of(" \t\"");
    const auto last = value.find_last_not_of(" \t\"");
    return first == std::string::npos ? "" : value.substr(first, last - first + 1);
  }
  return "";
}

}  // namespace

MachineInfo collect_machine_info() {
  MachineInfo m;
  m.cpu_model = file_value("/proc/cpuinfo", "model name", ':');
  if (m.cpu_model.empty()) m.cpu_model = "unknown";
  m.logical_cpus = std::thread::hardware_concurrency();
  const std::string mem = file_value("/proc/meminfo", "MemTotal", ':');  // "16384000 kB"
  try {
    m.memory_mib = std::stoull(mem) / 1024;
  } catch (const std::exception&) {
  }
  utsname u{};
  if (::uname(&u) == 0) m.kernel = std::string(u.sysname) + " " + u.release + " " + u.machine;
  m.os = file_value("/etc/os-release", "PRETTY_NAME", '=');
  m.dsekp_version = std::string("dsekp ") + DSEKP_VERSION + " (protocol v1)";
#if defined(__clang__)
  m.compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
  m.compiler = "gcc " __VERSION__;
#endif
  m.openssl = OpenSSL_version(OPENSSL_VERSION);
  m.mbedtls = "mbed TLS " MBEDTLS_VERSION_STRING;
  return m;
}

nlohmann::ordered_json to_json(const MachineInfo& m) {
  return {{"cpu_model", m.cpu_model},
          {"logical_cpus", m.logical_cpus},
          {"memory_mib", m.memory_mib},
          {"kernel", m.kernel},
          {"os", m.os},
          {"dsekp", m.dsekp_version},
          {"compiler", m.compiler},
          {"openssl", m.openssl},
          {"mbedtls", m.mbedtls},
          {"mosquitto", m.mosquitto}};
}

}  // namespace dsekp::experiment
