// Wire-level inspection of the TLS 1.3 ClientHello and ServerHello seen by the benchmark client.
//
// Why: OpenSSL's query functions say what the library thinks it negotiated; the hello messages say
// what actually went over the wire. psk_ke in particular is only proven by a ServerHello that
// carries pre_shared_key but no key_share, so the benchmark checks the bytes themselves.
#pragma once

#include <string>

#include <openssl/ssl.h>

namespace dsekp::bench::detail {

struct HelloObservation {
  bool client_hello_seen = false;
  bool client_sent_key_share = false;
  bool client_sent_psk = false;
  std::string client_psk_kex_modes;  // comma-separated names, in the client's order
  bool server_hello_seen = false;
  bool hello_retry_request = false;
  bool server_sent_key_share = false;
  bool server_sent_psk = false;
  bool parse_error = false;
};

// Installs a message callback on the client `ssl` that fills `obs` from the hello messages.
// `obs` must outlive the handshake; the callback is meant for verification runs, not timed ones.
void observe_hellos(SSL* client, HelloObservation* obs);

}  // namespace dsekp::bench::detail
