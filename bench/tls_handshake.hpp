// TLS 1.3 handshake CPU-cost benchmark (OpenSSL 3), public API used by `dsekp bench handshake`.
//
// Why: DSEKP claims a cheaper session-key handshake than TLS 1.3. To compare like with like, this
// library runs complete TLS 1.3 handshakes in one process (client and server over memory BIOs, no
// sockets) and reports the thread CPU time per handshake for three key-exchange modes. Every mode
// is verified to be what it claims (group, PSK use, certificate verification, wire-level key_share)
// so that a silent fallback cannot distort the comparison.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace dsekp::bench {

enum class TlsMode {
  ecdhe_x25519_p256_cert,  // full handshake: X25519 ECDHE + ECDSA P-256 server certificate
  psk_dhe_ke,              // external PSK with an X25519 (EC)DHE key share
  psk_ke,                  // external PSK only, no (EC)DHE
};

// Stable identifier for reports, e.g. "tls13_psk_ke".
const char* tls_mode_name(TlsMode mode);

struct TlsHandshakeStats {
  TlsMode mode{};
  std::size_t iterations = 0;
  double cpu_us_mean = 0;
  double cpu_us_median = 0;
  double cpu_us_min = 0;
  // Group used for (EC)DHE as seen by the server, "none" when no key exchange group was used.
  std::string negotiated_group;
  bool used_psk = false;       // SSL_session_reused() on both sides for every measured handshake
  bool peer_verified = false;  // certificate mode: peer certificate present and X509_V_OK
  // Wire-level facts from the verification handshake (parsed ClientHello / ServerHello):
  bool server_sent_key_share = false;  // false proves no (EC)DHE in the ServerHello
  bool client_sent_key_share = false;  // OpenSSL 3.0 clients always send one (see psk_ke notes)
  std::string client_psk_kex_modes;    // e.g. "psk_dhe_ke,psk_ke"
};

// The PSK is a 32-byte external TLS 1.3 PSK for TLS_AES_128_GCM_SHA256.
using TlsPsk = std::array<std::uint8_t, 32>;

struct TlsBenchOptions {
  std::size_t warmup_iterations = 20;
  // Test hook: when set the server holds this PSK instead of the client's, to prove that a key
  // mismatch makes the PSK handshake fail rather than fall back to something else.
  std::optional<TlsPsk> server_psk_override;
};

class TlsHandshakeBench {
 public:
  // Generates the P-256 key, self-signed certificate, random PSK and all SSL_CTXs once, so that
  // none of that one-time setup is counted per handshake. Throws std::runtime_error on failure.
  explicit TlsHandshakeBench(TlsBenchOptions options = {});
  ~TlsHandshakeBench();
  TlsHandshakeBench(const TlsHandshakeBench&) = delete;
  TlsHandshakeBench& operator=(const TlsHandshakeBench&) = delete;

  // One verified handshake, then warm-up, then `iterations` timed handshakes. Throws
  // std::runtime_error if any handshake fails or does not match the mode.
  TlsHandshakeStats run(TlsMode mode, std::size_t iterations);

  // One handshake with full verification (including the wire-level checks); for tests.
  bool run_once(TlsMode mode, std::string* error);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dsekp::bench
