// External TLS 1.3 PSK sessions and the OpenSSL callbacks that hand them out.
//
// Why: see tls_psk.hpp. The callbacks return an extra reference to a prebuilt session (the same
// approach as OpenSSL's s_client/s_server), so no per-handshake key setup is counted beyond what
// OpenSSL itself does.
#include "tls_psk.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

namespace dsekp::bench::detail {
namespace {

constexpr unsigned char kIdentity[] = "dsekp-bench-psk";
constexpr std::size_t kIdentityLen = sizeof kIdentity - 1;
// TLS_AES_128_GCM_SHA256 on the wire (RFC 8446 §B.4).
constexpr unsigned char kCipherId[2] = {0x13, 0x01};

[[noreturn]] void fail(const char* what) {
  throw std::runtime_error(std::string("TLS bench PSK: ") + what + ": " + drain_openssl_errors());
}

SSL_SESSION* session_of(SSL* ssl) {
  return static_cast<SSL_SESSION*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
}

int client_use_session(SSL* ssl, const EVP_MD* md, const unsigned char** id, size_t* idlen,
                       SSL_SESSION** sess) {
  SSL_SESSION* psk = session_of(ssl);
  *sess = nullptr;
  // On a second call (after a HelloRetryRequest) md is the negotiated hash; a PSK for a different
  // hash must not be offered. Returning 1 with no session means "no PSK".
  if (md != nullptr && md != SSL_CIPHER_get_handshake_digest(SSL_SESSION_get0_cipher(psk))) {
    return 1;
  }
  // Ownership of *sess passes to OpenSSL; keep our own reference alive.
  if (SSL_SESSION_up_ref(psk) != 1) return 0;
  *sess = psk;
  *id = kIdentity;
  *idlen = kIdentityLen;
  return 1;
}

int server_find_session(SSL* ssl, const unsigned char* identity, size_t identity_len,
                        SSL_SESSION** sess) {
  *sess = nullptr;
  // Unknown identity: no PSK. With no server certificate the handshake then fails, which is what
  // the tests rely on to show that there is no silent fallback.
  if (identity_len != kIdentityLen || std::memcmp(identity, kIdentity, kIdentityLen) != 0) {
    return 1;
  }
  SSL_SESSION* psk = session_of(ssl);
  if (SSL_SESSION_up_ref(psk) != 1) return 0;
  *sess = psk;
  return 1;
}

SslSessionPtr make_session(const SSL_CIPHER* cipher, const TlsPsk& key) {
  SslSessionPtr session(SSL_SESSION_new());
  if (!session) fail("SSL_SESSION_new");
  if (SSL_SESSION_set1_master_key(session.get(), key.data(), key.size()) != 1 ||
      SSL_SESSION_set_cipher(session.get(), cipher) != 1 ||
      SSL_SESSION_set_protocol_version(session.get(), TLS1_3_VERSION) != 1) {
    fail("configuring the PSK session");
  }
  return session;
}

}  // namespace

TlsPskSessions make_psk_sessions(const TlsPsk& client_key, const TlsPsk& server_key) {
  // SSL_CIPHER_find needs an SSL object; a throwaway one is enough to look the suite up.
  SslCtxPtr ctx(SSL_CTX_new(TLS_method()));
  if (!ctx) fail("SSL_CTX_new");
  SslPtr ssl(SSL_new(ctx.get()));
  if (!ssl) fail("SSL_new");
  const SSL_CIPHER* cipher = SSL_CIPHER_find(ssl.get(), kCipherId);
  if (cipher == nullptr || std::string(SSL_CIPHER_get_name(cipher)) != kTlsCipherSuite) {
    fail("SSL_CIPHER_find(TLS_AES_128_GCM_SHA256)");
  }
  return TlsPskSessions{make_session(cipher, client_key), make_session(cipher, server_key)};
}

void install_client_psk(SSL_CTX* ctx, SSL_SESSION* session) {
  SSL_CTX_set_app_data(ctx, session);
  SSL_CTX_set_psk_use_session_callback(ctx, client_use_session);
}

void install_server_psk(SSL_CTX* ctx, SSL_SESSION* session) {
  SSL_CTX_set_app_data(ctx, session);
  SSL_CTX_set_psk_find_session_callback(ctx, server_find_session);
}

}  // namespace dsekp::bench::detail
