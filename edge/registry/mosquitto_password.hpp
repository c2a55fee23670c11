// Password-file entries in Mosquitto 2.0's own format, computed here with OpenSSL instead of by
// running mosquitto_passwd (no subprocess, no password on a command line).
//
// The format, as mosquitto_passwd 2.0.11 writes it and the broker reads it:
//
//   username:$7$ITERATIONS$SALT$HASH
//
// "7" names PBKDF2-HMAC-SHA512; SALT is 12 random bytes and HASH the 64-byte PBKDF2 output, both
// in padded standard base64; ITERATIONS is decimal (mosquitto_passwd uses 101). The test suite
// checks a hash against one mosquitto_passwd produced, and the broker ACL test has a real
// Mosquitto accept logins against a file written with it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "dsekp/bytes.hpp"
#include "dsekp/crypto.hpp"
#include "registry_status.hpp"

namespace dsekp::edge {

inline constexpr std::size_t kMosquittoSaltSize = 12;
/// mosquitto_passwd's default. Stretching adds nothing for our passwords (128 random bits each,
/// see device_registry.hpp), and every CONNECT pays for the iterations on the broker.
inline constexpr std::uint32_t kMosquittoIterations = 101;

/// "$7$iterations$salt$hash" for `password` with the given salt.
RegistryStatus mosquitto_password_hash(std::string_view password, ByteView salt,
                                       std::uint32_t iterations, std::string& out);

/// One password-file line (with its newline) for `username`, with a fresh salt from `rng`.
RegistryStatus mosquitto_password_line(std::string_view username, std::string_view password,
                                       Rng& rng, std::string& out);

}  // namespace dsekp::edge
