// Password hashes in RabbitMQ's `rabbit_password_hashing_sha256` format, for the users of a
// definitions document (edge/broker_admin/rabbitmq_definitions.hpp): base64 of a 4-byte random
// salt followed by SHA-256(salt || password). RabbitMQ checks a login by recomputing it; the
// format is RabbitMQ's, not a choice of ours (a single salted SHA-256 is weak against offline
// guessing, so the document is written 0600 like Mosquitto's password file, and the passwords are
// the registry's random 128-bit ones, not human ones).
#pragma once

#include <string>
#include <string_view>

#include "dsekp/bytes.hpp"
#include "dsekp/crypto.hpp"
#include "registry_status.hpp"

namespace dsekp::edge {

inline constexpr std::size_t kRabbitMqSaltSize = 4;
inline constexpr std::string_view kRabbitMqHashingAlgorithm = "rabbit_password_hashing_sha256";

/// The hash of `password` with `salt` (kRabbitMqSaltSize bytes).
RegistryStatus rabbitmq_password_hash(std::string_view password, ByteView salt, std::string& out);
/// The same with a fresh salt from `rng`.
RegistryStatus rabbitmq_password_hash(std::string_view password, Rng& rng, std::string& out);

}  // namespace dsekp::edge
