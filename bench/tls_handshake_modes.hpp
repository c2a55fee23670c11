// Per-mode client/server SSL_CTX construction for the TLS 1.3 handshake benchmark.
//
// Why: each measured mode (certificate, psk_dhe_ke, psk_ke) needs its own, fixed configuration so
// that the per-handshake loop only does SSL_new / handshake / SSL_free. Keeping the configuration
// in one place also documents exactly how each mode is forced in OpenSSL 3.0.
#pragma once

#include "tls_credentials.hpp"
#include "tls_handshake.hpp"
#include "tls_ossl_util.hpp"
#include "tls_psk.hpp"

namespace dsekp::bench::detail {

struct TlsContextPair {
  SslCtxPtr client;
  SslCtxPtr server;
};

// Builds the client and server SSL_CTX for `mode`. Throws std::runtime_error on failure.
TlsContextPair make_mode_contexts(TlsMode mode, const TlsServerCredentials& creds,
                                  const TlsPskSessions& psk);

}  // namespace dsekp::bench::detail
