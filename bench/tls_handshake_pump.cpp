// Drives a client and a server SSL over a BIO pair until both finish the handshake.
//
// Why: see tls_handshake_pump.hpp. CPU time is taken with CLOCK_THREAD_CPUTIME_ID because client
// and server both run in this thread; the fact collection in the middle is excluded from it.
#include "tls_handshake_pump.hpp"

#include <time.h>

#include <string>

#include "tls_ossl_util.hpp"

namespace dsekp::bench::detail {
namespace {

// A TLS 1.3 handshake needs 2 client and 2 server steps; anything far beyond that is a stall.
constexpr int kMaxRounds = 16;

double thread_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// Advances one side. Returns false on a real failure (anything but "wants more I/O").
bool step(SSL* ssl, bool* done, const char* side, std::string* error) {
  if (*done) return true;
  const int rc = SSL_do_handshake(ssl);
  if (rc == 1) {
    *done = true;
    return true;
  }
  const int err = SSL_get_error(ssl, rc);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return true;
  *error = std::string(side) + " handshake failed (SSL_get_error " + std::to_string(err) +
           "): " + drain_openssl_errors();
  return false;
}

bool pump(SSL* client, SSL* server, std::string* error) {
  bool client_done = false;
  bool server_done = false;
  for (int round = 0; round < kMaxRounds; ++round) {
    if (!step(client, &client_done, "client", error)) return false;
    if (!step(server, &server_done, "server", error)) return false;
    if (client_done && server_done) return true;
  }
  *error = "handshake did not complete within " + std::to_string(kMaxRounds) + " rounds";
  return false;
}

HandshakeFacts collect_facts(SSL* client, SSL* server) {
  HandshakeFacts f;
  f.client_reused = SSL_session_reused(client) == 1;
  f.server_reused = SSL_session_reused(server) == 1;
  // The macro goes through SSL_ctrl and yields a long; group NIDs fit in an int.
  f.server_group_nid = static_cast<int>(SSL_get_negotiated_group(server));
  f.client_group_nid = static_cast<int>(SSL_get_negotiated_group(client));
  f.peer_cert_present = SSL_get0_peer_certificate(client) != nullptr;
  f.verify_result = SSL_get_verify_result(client);
  SSL_get_peer_signature_type_nid(client, &f.peer_sig_type_nid);
  SSL_get_peer_signature_nid(client, &f.peer_sig_md_nid);
  f.version = SSL_version(client);
  if (const SSL_CIPHER* c = SSL_get_current_cipher(client)) f.cipher = SSL_CIPHER_get_name(c);
  return f;
}

}  // namespace

HandshakeOutcome run_handshake(SSL_CTX* client_ctx, SSL_CTX* server_ctx, HelloObservation* hellos) {
  HandshakeOutcome out;
  const double start = thread_cpu_us();
  double paused = 0;
  {
    SslPtr client(SSL_new(client_ctx));
    SslPtr server(SSL_new(server_ctx));
    BIO* client_bio = nullptr;
    BIO* server_bio = nullptr;
    if (!client || !server || BIO_new_bio_pair(&client_bio, 0, &server_bio, 0) != 1) {
      out.error = "SSL_new/BIO_new_bio_pair: " + drain_openssl_errors();
      return out;
    }
    // Each SSL takes over its end of the pair (one reference, used for both read and write).
    SSL_set_bio(client.get(), client_bio, client_bio);
    SSL_set_bio(server.get(), server_bio, server_bio);
    SSL_set_connect_state(client.get());
    SSL_set_accept_state(server.get());
    if (hellos != nullptr) observe_hellos(client.get(), hellos);

    out.ok = pump(client.get(), server.get(), &out.error);

    const double pause_start = thread_cpu_us();
    if (out.ok) out.facts = collect_facts(client.get(), server.get());
    paused = thread_cpu_us() - pause_start;
  }  // SSL_free of both sides (and their BIOs) is part of the measured cost.
  out.cpu_us = thread_cpu_us() - start - paused;
  // A failed handshake may leave queued errors; they must not leak into the next one.
  ERR_clear_error();
  return out;
}

}  // namespace dsekp::bench::detail
