// PBKDF2-SHA512 password hashes in Mosquitto 2.0's "$7$" format (see mosquitto_password.hpp).
#include "mosquitto_password.hpp"

#include <openssl/evp.h>

#include <array>
#include <limits>

#include "text_encoding.hpp"

namespace dsekp::edge {
namespace {

constexpr std::size_t kSha512Size = 64;

}  // namespace

RegistryStatus mosquitto_password_hash(std::string_view password, ByteView salt,
                                       std::uint32_t iterations, std::string& out) {
  constexpr auto kIntMax = static_cast<std::size_t>(std::numeric_limits<int>::max());
  if (salt.empty() || iterations == 0 || iterations > kIntMax || password.size() > kIntMax ||
      salt.size() > kIntMax)
    return {RegistryErrc::invalid_argument, "invalid password hash parameters"};
  std::array<std::uint8_t, kSha512Size> hash{};
  const int rc = PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()), salt.data(),
                                   static_cast<int>(salt.size()), static_cast<int>(iterations),
                                   EVP_sha512(), static_cast<int>(hash.size()), hash.data());
  if (rc != 1) return {RegistryErrc::crypto_failure, "PBKDF2-SHA512 failed in OpenSSL"};
  out = "$7$" + std::to_string(iterations) + "$" + to_base64(salt) + "$" + to_base64(hash);
  return {};
}

RegistryStatus mosquitto_password_line(std::string_view username, std::string_view password,
                                       Rng& rng, std::string& out) {
  std::array<std::uint8_t, kMosquittoSaltSize> salt{};
  if (rng.fill(salt) != Error::ok)
    return {RegistryErrc::crypto_failure, "the CSPRNG failed to draw a password salt"};
  std::string hash;
  if (auto s = mosquitto_password_hash(password, salt, kMosquittoIterations, hash); !s.ok())
    return s;
  out = std::string(username) + ":" + hash + "\n";
  return {};
}

}  // namespace dsekp::edge
