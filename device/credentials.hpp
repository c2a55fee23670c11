// The devices a fleet simulates, read from the JSON that `dsekp keys add` prints: one object, or
// an array of such objects (one per device).
//
// Each object needs dev_id, dev_secret_hex (32 bytes) and edge_salt_hex (16-32 bytes);
// psk_key_hex (16 bytes) only for the PSK baseline (`dsekp keys add --psk-baseline`); `broker`
// {username, password} is optional (absent or empty username: anonymous login) and its host/port
// are ignored (the command line names the broker); `topics` {init, ack, data, down, psk} is
// optional and defaults to the protocol's topics (PROTOCOL.md section 2); `ratchet` (true: the
// device ratchets its secret, PROTOCOL.md 6.6) is optional and defaults to false, and so is
// `generation` (the registry's, new at every rotation; 0 if absent). Other members are ignored.
// Anything else wrong is refused with a CredentialsError whose message names the file, the device
// and the problem.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "dsekp/device_session.hpp"
#include "dsekp/spec.hpp"

namespace dsekp::device {

struct DeviceTopics {
  std::string init = "dsekp/init";
  std::string ack;  // dsekp/init/ack/{dev_id}
  std::string data = "dsekp/data";
  std::string down;   // dsekp/down/{dev_id}
  std::string rekey;  // dsekp/rekey/{dev_id}
  std::string psk = "psk/data";
};

/// Everything one simulated device is provisioned with.
struct ProvisionedDevice {
  DeviceCredentials credentials;  // dev_id, DEV_SECRET, EDGE_SALT
  PskKey psk_key;
  bool has_psk_key = false;      // provisioned for the PSK baseline
  bool ratchet = false;          // ratchets its secret (PROTOCOL.md 6.6): credentials is S_0
  std::uint64_t generation = 0;  // the material's "generation" (0 if absent): new at a rotation
  std::string username;          // empty: anonymous
  std::string password;
  DeviceTopics topics;
};

class CredentialsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses the file's text; `source` names it in error messages.
std::vector<ProvisionedDevice> parse_credentials(std::string_view text, const std::string& source);

/// Reads and parses `path`. Throws CredentialsError (unreadable, not JSON, a bad field, an empty
/// array, a dev_id twice).
std::vector<ProvisionedDevice> load_credentials(const std::filesystem::path& path);

}  // namespace dsekp::device
