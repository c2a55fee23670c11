// Client/server SSL_CTX configuration for each benchmarked TLS 1.3 mode.
//
// Why: see tls_handshake_modes.hpp. How each mode is forced with OpenSSL 3.0:
//  * certificate: X25519 key share, server signs with its P-256 key (ECDSA+SHA256 only), client
//    verifies the chain against the self-signed certificate as its only trust anchor.
//  * psk_dhe_ke: external PSK plus X25519 key share. The server has no certificate, so a rejected
//    PSK cannot silently become a full handshake.
//  * psk_ke: OpenSSL 3.0 has no way to make a client offer psk_ke alone. With
//    SSL_OP_ALLOW_NO_DHE_KEX its psk_key_exchange_modes are always {psk_dhe_ke, psk_ke} and it
//    always sends a key_share (tls_construct_ctos_psk_kex_modes / _key_share), and a server picks
//    psk_dhe_ke whenever it can (SSL_OP_PREFER_NO_DHE_KEX only appeared in OpenSSL 3.3). The server
//    falls back to psk_ke only when the client's key share is unusable and no shared group exists
//    (otherwise it sends a HelloRetryRequest; see final_key_share). So the psk_ke server is given a
//    group list disjoint from the client's (P-256 vs X25519). Cost of this workaround: the client
//    still generates one X25519 key pair that is never used.
#include "tls_handshake_modes.hpp"

#include <stdexcept>
#include <string>

namespace dsekp::bench::detail {
namespace {

constexpr const char* kClientGroups = "X25519";
// Deliberately disjoint from kClientGroups: this is what makes the psk_ke server skip (EC)DHE.
constexpr const char* kPskKeServerGroups = "P-256";

[[noreturn]] void fail(const char* what) {
  throw std::runtime_error(std::string("TLS bench SSL_CTX: ") + what + ": " +
                           drain_openssl_errors());
}

// Settings shared by every context: TLS 1.3 only, one suite, no tickets, no session cache.
SslCtxPtr new_tls13_ctx(const SSL_METHOD* method, const char* groups) {
  SslCtxPtr ctx(SSL_CTX_new(method));
  if (!ctx) fail("SSL_CTX_new");
  SSL_CTX* c = ctx.get();
  if (SSL_CTX_set_min_proto_version(c, TLS1_3_VERSION) != 1 ||
      SSL_CTX_set_max_proto_version(c, TLS1_3_VERSION) != 1) {
    fail("TLS 1.3 only");
  }
  if (SSL_CTX_set_ciphersuites(c, kTlsCipherSuite) != 1) fail("SSL_CTX_set_ciphersuites");
  if (SSL_CTX_set1_groups_list(c, groups) != 1) fail("SSL_CTX_set1_groups_list");
  // NewSessionTicket construction is post-handshake work a DSEKP session has no equivalent of.
  // In TLS 1.3, SSL_OP_NO_TICKET alone only switches to stateful tickets; num_tickets 0 stops them.
  SSL_CTX_set_options(c, SSL_OP_NO_TICKET);
  if (SSL_CTX_set_num_tickets(c, 0) != 1) fail("SSL_CTX_set_num_tickets");
  // Caching sessions would add bookkeeping that is not part of the handshake itself.
  SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_OFF);
  return ctx;
}

void configure_cert_mode(TlsContextPair& p, const TlsServerCredentials& creds) {
  if (SSL_CTX_use_certificate(p.server.get(), creds.cert.get()) != 1 ||
      SSL_CTX_use_PrivateKey(p.server.get(), creds.key.get()) != 1 ||
      SSL_CTX_check_private_key(p.server.get()) != 1) {
    fail("server certificate/key");
  }
  // Pin the signature scheme to ecdsa_secp256r1_sha256 so the measured cost is exactly that.
  if (SSL_CTX_set1_sigalgs_list(p.server.get(), "ECDSA+SHA256") != 1 ||
      SSL_CTX_set1_sigalgs_list(p.client.get(), "ECDSA+SHA256") != 1) {
    fail("SSL_CTX_set1_sigalgs_list");
  }
  // The self-signed certificate is the client's only trust anchor; verification is mandatory so
  // the ECDSA verify and chain checks are part of the measured handshake.
  if (X509_STORE_add_cert(SSL_CTX_get_cert_store(p.client.get()), creds.cert.get()) != 1) {
    fail("X509_STORE_add_cert");
  }
}

void configure_psk_mode(TlsContextPair& p, const TlsPskSessions& psk, bool allow_no_dhe) {
  install_client_psk(p.client.get(), psk.client.get());
  install_server_psk(p.server.get(), psk.server.get());
  if (allow_no_dhe) {
    SSL_CTX_set_options(p.client.get(), SSL_OP_ALLOW_NO_DHE_KEX);
    SSL_CTX_set_options(p.server.get(), SSL_OP_ALLOW_NO_DHE_KEX);
  }
}

}  // namespace

TlsContextPair make_mode_contexts(TlsMode mode, const TlsServerCredentials& creds,
                                  const TlsPskSessions& psk) {
  const char* server_groups = mode == TlsMode::psk_ke ? kPskKeServerGroups : kClientGroups;
  TlsContextPair p{new_tls13_ctx(TLS_client_method(), kClientGroups),
                   new_tls13_ctx(TLS_server_method(), server_groups)};
  // Every client insists on an authenticated peer; in PSK modes that can only be the PSK, because
  // the trust store is empty and the server has no certificate.
  SSL_CTX_set_verify(p.client.get(), SSL_VERIFY_PEER, nullptr);
  switch (mode) {
    case TlsMode::ecdhe_x25519_p256_cert:
      configure_cert_mode(p, creds);
      break;
    case TlsMode::psk_dhe_ke:
      configure_psk_mode(p, psk, false);
      break;
    case TlsMode::psk_ke:
      configure_psk_mode(p, psk, true);
      break;
  }
  return p;
}

}  // namespace dsekp::bench::detail
