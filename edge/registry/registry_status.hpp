// The result of every device-registry operation: a small error code that callers branch on, and a
// message for the operator that says what went wrong and with which device or file.
//
// The registry is edge-side code (exceptions are allowed there), but its callers are the edge's
// hot path and the CLI, and both want to decide per error what to do (an unknown device is a
// normal event on the edge, a corrupt database is not), so failures are values, not exceptions.
#pragma once

#include <string>
#include <utility>

namespace dsekp::edge {

enum class RegistryErrc {
  ok = 0,
  invalid_dev_id,    // not 1-64 bytes of [A-Za-z0-9._-] (dsekp::DevId::assign)
  invalid_name,      // a broker user name outside the same alphabet
  already_exists,    // `add` of a dev_id that is registered
  not_found,         // no device with this dev_id
  name_conflict,     // a dev_id equal to the edge's broker user name, or the reverse
  insecure_file,     // the database file is readable or writable by group/others, or not a file
  not_a_registry,    // the file is an SQLite database of something else, or of another schema
  io,                // a file could not be created, written or renamed
  database,          // SQLite reported an error (message has SQLite's text)
  corrupt,           // a stored value violates the schema's sizes (e.g. a 31-byte DEV_SECRET)
  invalid_argument,  // another argument outside its range (a broker address, hash parameters)
  crypto_failure,    // the CSPRNG or OpenSSL failed
  broker,            // the broker was unreachable, refused the admin login or a command
  secret_erased,     // a ratcheting device's provisioned secret, erased (PROTOCOL.md 6.6)
};

/// Stable snake_case name of a code, e.g. "not_found". Never null.
const char* registry_errc_name(RegistryErrc code) noexcept;

class [[nodiscard]] RegistryStatus {
 public:
  RegistryStatus() = default;
  RegistryStatus(RegistryErrc code, std::string message)
      : code_(code), message_(std::move(message)) {}

  [[nodiscard]] bool ok() const noexcept { return code_ == RegistryErrc::ok; }
  [[nodiscard]] RegistryErrc code() const noexcept { return code_; }
  /// Empty on success; otherwise one line for the operator.
  [[nodiscard]] const std::string& message() const noexcept { return message_; }

 private:
  RegistryErrc code_ = RegistryErrc::ok;
  std::string message_;
};

}  // namespace dsekp::edge
