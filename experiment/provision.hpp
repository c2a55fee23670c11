// Provisioning for one experiment, in-process with the registry library (as `dsekp keys` does):
// a fresh registry, the devices of the main runs and of the trial, their credentials as JSON
// arrays for `dsekp device --credentials` (mode 0600: they hold DEV_SECRET and the PSK key), and
// the broker's password file and ACL with the edge account `dsekp-edge`.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace dsekp::experiment {

inline constexpr std::string_view kEdgeBrokerUser = "dsekp-edge";

/// "esp32-01", "esp32-02", ...: `prefix` + a number zero-padded to at least two digits (more when
/// `count` needs them), so that the ids sort in order.
std::vector<std::string> device_ids(std::string_view prefix, std::size_t count);

struct ProvisionRequest {
  std::string secrets_dir;  // created 0700; everything secret goes here
  std::vector<std::string> main_devices;
  std::vector<std::string> trial_devices;  // may be empty (--no-trial)
  bool broker_accounts = true;  // false with --broker: no password file, the edge is anonymous
  std::string broker_address = "127.0.0.1:1883";  // written into the material; devices ignore it
};

struct Provisioned {
  std::string registry_db;
  std::string main_credentials;   // JSON array, 0600
  std::string trial_credentials;  // empty without trial devices
  std::string password_file;      // empty without broker accounts
  std::string acl_file;
};

/// Creates the registry and files. Throws std::runtime_error with the registry's message.
Provisioned provision(const ProvisionRequest& request);

}  // namespace dsekp::experiment
