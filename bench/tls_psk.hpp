// External TLS 1.3 PSK provisioning for the benchmark (RFC 8446 §4.2.11, OpenSSL session API).
//
// Why: the PSK modes model an IoT device with a pre-provisioned symmetric key, the same trust
// setup DSEKP assumes. OpenSSL 3 represents an external TLS 1.3 PSK as an SSL_SESSION handed out
// by the psk_use_session (client) and psk_find_session (server) callbacks.
#pragma once

#include <openssl/ssl.h>

#include "tls_handshake.hpp"
#include "tls_ossl_util.hpp"

namespace dsekp::bench::detail {

// The one cipher suite every mode uses; a TLS 1.3 PSK is bound to its hash (SHA-256).
inline constexpr const char* kTlsCipherSuite = "TLS_AES_128_GCM_SHA256";

// One SSL_SESSION per side, referenced (not owned) by the PSK callbacks through SSL_CTX app data.
// Must outlive every SSL_CTX the callbacks are installed on.
struct TlsPskSessions {
  SslSessionPtr client;
  SslSessionPtr server;
};

// Builds both sessions with the fixed identity, TLS_AES_128_GCM_SHA256 and TLS 1.3. Separate keys
// per side exist only so tests can provoke a mismatch. Throws std::runtime_error on failure.
TlsPskSessions make_psk_sessions(const TlsPsk& client_key, const TlsPsk& server_key);

// Makes every client of `ctx` offer `session` as its external PSK.
void install_client_psk(SSL_CTX* ctx, SSL_SESSION* session);

// Makes every server of `ctx` accept `session` for the fixed identity (and nothing else).
void install_server_psk(SSL_CTX* ctx, SSL_SESSION* session);

}  // namespace dsekp::bench::detail
