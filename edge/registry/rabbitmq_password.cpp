// RabbitMQ's salted SHA-256 password hashes (see rabbitmq_password.hpp).
#include "rabbitmq_password.hpp"

#include <openssl/evp.h>

#include <array>
#include <vector>

#include "text_encoding.hpp"

namespace dsekp::edge {

RegistryStatus rabbitmq_password_hash(std::string_view password, ByteView salt, std::string& out) {
  if (salt.size() != kRabbitMqSaltSize)
    return {RegistryErrc::invalid_argument, "a RabbitMQ password salt is 4 bytes"};
  std::vector<std::uint8_t> salted(salt.begin(), salt.end());
  salted.insert(salted.end(), password.begin(), password.end());
  std::array<std::uint8_t, 32> digest{};
  unsigned int size = 0;
  const int rc =
      EVP_Digest(salted.data(), salted.size(), digest.data(), &size, EVP_sha256(), nullptr);
  secure_wipe(salted);
  if (rc != 1 || size != digest.size())
    return {RegistryErrc::crypto_failure, "SHA-256 failed in OpenSSL"};
  std::vector<std::uint8_t> stored(salt.begin(), salt.end());
  stored.insert(stored.end(), digest.begin(), digest.end());
  out = to_base64(stored);
  return {};
}

RegistryStatus rabbitmq_password_hash(std::string_view password, Rng& rng, std::string& out) {
  std::array<std::uint8_t, kRabbitMqSaltSize> salt{};
  if (rng.fill(salt) != Error::ok)
    return {RegistryErrc::crypto_failure, "the CSPRNG failed to draw a password salt"};
  return rabbitmq_password_hash(password, salt, out);
}

}  // namespace dsekp::edge
