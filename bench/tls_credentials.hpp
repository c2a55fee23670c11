// In-memory credentials for the TLS benchmark: an ECDSA P-256 key with a self-signed certificate.
//
// Why: the certificate-mode handshake must include a real ECDSA P-256 signature by the server and
// its verification by the client, without touching the file system or an external CA.
#pragma once

#include <string>

#include "tls_ossl_util.hpp"

namespace dsekp::bench::detail {

struct TlsServerCredentials {
  EvpPkeyPtr key;
  X509Ptr cert;
};

// Generates a fresh P-256 key and a self-signed X.509 v3 certificate for `common_name`.
// Throws std::runtime_error on failure.
TlsServerCredentials make_self_signed_p256(const std::string& common_name);

}  // namespace dsekp::bench::detail
