// Expected properties of each benchmarked TLS 1.3 mode, compared with what was observed.
//
// Why: see tls_mode_check.hpp. The expectations are written out per mode so a reader can see at a
// glance what "certificate", "psk_dhe_ke" and "psk_ke" mean for this benchmark.
#include "tls_mode_check.hpp"

#include <openssl/objects.h>
#include <openssl/x509.h>

#include "tls_psk.hpp"

namespace dsekp::bench::detail {
namespace {

// Appends `what` to the mismatch list when `ok` is false.
void expect(bool ok, const char* what, std::string* mismatches) {
  if (ok) return;
  if (!mismatches->empty()) *mismatches += "; ";
  *mismatches += what;
}

}  // namespace

std::string group_name(int nid) {
  if (nid == 0) return "none";
  const char* sn = OBJ_nid2sn(nid);
  return sn != nullptr ? sn : "unknown(" + std::to_string(nid) + ")";
}

std::string check_facts(TlsMode mode, const HandshakeFacts& f) {
  std::string m;
  expect(f.version == TLS1_3_VERSION, "protocol is not TLS 1.3", &m);
  expect(f.cipher == kTlsCipherSuite, "cipher is not TLS_AES_128_GCM_SHA256", &m);
  const bool psk = mode != TlsMode::ecdhe_x25519_p256_cert;
  expect(f.client_reused == psk && f.server_reused == psk,
         psk ? "PSK not used (SSL_session_reused false)" : "unexpected PSK/resumption", &m);
  if (mode == TlsMode::psk_ke) {
    expect(f.server_group_nid == 0, "server reports a key-exchange group in psk_ke", &m);
    expect(f.client_group_nid == 0, "client reports a key-exchange group in psk_ke", &m);
  } else {
    expect(f.server_group_nid == NID_X25519, "server group is not X25519", &m);
    expect(f.client_group_nid == NID_X25519, "client group is not X25519", &m);
  }
  if (mode == TlsMode::ecdhe_x25519_p256_cert) {
    expect(f.peer_cert_present, "no server certificate", &m);
    expect(f.verify_result == X509_V_OK, "server certificate did not verify", &m);
    expect(f.peer_sig_type_nid == EVP_PKEY_EC && f.peer_sig_md_nid == NID_sha256,
           "server signature is not ECDSA with SHA-256", &m);
  } else {
    expect(!f.peer_cert_present, "server sent a certificate in a PSK mode", &m);
  }
  return m;
}

std::string check_hellos(TlsMode mode, const HelloObservation& h) {
  std::string m;
  expect(!h.parse_error, "malformed hello message", &m);
  expect(h.client_hello_seen && h.server_hello_seen, "hello messages not observed", &m);
  expect(!h.hello_retry_request, "HelloRetryRequest occurred", &m);
  switch (mode) {
    case TlsMode::ecdhe_x25519_p256_cert:
      expect(h.server_sent_key_share, "ServerHello lacks key_share", &m);
      expect(!h.server_sent_psk, "ServerHello selected a PSK", &m);
      break;
    case TlsMode::psk_dhe_ke:
      expect(h.client_sent_psk && h.server_sent_psk, "PSK not offered/selected on the wire", &m);
      expect(h.client_psk_kex_modes == "psk_dhe_ke", "client did not offer psk_dhe_ke only", &m);
      expect(h.server_sent_key_share, "ServerHello lacks key_share", &m);
      break;
    case TlsMode::psk_ke:
      expect(h.client_sent_psk && h.server_sent_psk, "PSK not offered/selected on the wire", &m);
      // OpenSSL 3.0 clients cannot offer psk_ke alone (see tls_handshake_modes.cpp).
      expect(h.client_psk_kex_modes == "psk_dhe_ke,psk_ke", "client did not offer psk_ke", &m);
      expect(!h.server_sent_key_share, "ServerHello carries a key_share (so not psk_ke)", &m);
      break;
  }
  return m;
}

}  // namespace dsekp::bench::detail
