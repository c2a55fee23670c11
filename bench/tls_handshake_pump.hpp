// One complete in-memory TLS 1.3 handshake (client and server in the calling thread), timed.
//
// Why: the benchmark's unit of work. Client and server are connected by a BIO pair and driven
// alternately until both report completion, so the thread CPU time covers both sides including
// SSL_new/SSL_free and nothing else (no sockets, no scheduler hand-offs).
#pragma once

#include <string>

#include <openssl/ssl.h>

#include "tls_hello_inspect.hpp"

namespace dsekp::bench::detail {

// What OpenSSL reports about the finished handshake; read outside the timed window.
struct HandshakeFacts {
  bool client_reused = false;
  bool server_reused = false;
  int server_group_nid = 0;  // SSL_get_negotiated_group on the server (0: none)
  int client_group_nid = 0;
  bool peer_cert_present = false;  // client side
  long verify_result = -1;         // client side, X509_V_OK == 0
  int peer_sig_type_nid = 0;       // client side: key type of the server's signature (if any)
  int peer_sig_md_nid = 0;         // client side: digest of the server's signature (if any)
  int version = 0;
  std::string cipher;
};

struct HandshakeOutcome {
  bool ok = false;
  std::string error;  // set when !ok
  double cpu_us = 0;  // thread CPU time of SSL_new..handshake..SSL_free, both sides
  HandshakeFacts facts;
};

// Runs one handshake. If `hellos` is non-null the client's hello messages are parsed into it
// (verification runs only: the parsing would otherwise be counted in cpu_us).
HandshakeOutcome run_handshake(SSL_CTX* client_ctx, SSL_CTX* server_ctx, HelloObservation* hellos);

}  // namespace dsekp::bench::detail
