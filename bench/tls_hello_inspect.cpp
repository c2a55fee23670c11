// Parses the ClientHello / ServerHello handed to an OpenSSL message callback (RFC 8446 §4.1).
//
// Why: see tls_hello_inspect.hpp; only the fields needed to prove the key-exchange mode are read
// (extension presence and the psk_key_exchange_modes list). Any malformed message is flagged.
#include "tls_hello_inspect.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

namespace dsekp::bench::detail {
namespace {

constexpr std::uint8_t kClientHello = 1;
constexpr std::uint8_t kServerHello = 2;
constexpr unsigned kExtPreSharedKey = 41;
constexpr unsigned kExtPskKexModes = 45;
constexpr unsigned kExtKeyShare = 51;

// RFC 8446 §4.1.3: a HelloRetryRequest is a ServerHello with this fixed random.
constexpr std::uint8_t kHrrRandom[32] = {
    0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
    0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C};

// Bounds-checked big-endian reader; any overrun sets `bad` and yields zeros/empty spans.
struct Reader {
  std::span<const std::uint8_t> rest;
  bool bad = false;

  std::span<const std::uint8_t> take(std::size_t n) {
    if (bad || n > rest.size()) {
      bad = true;
      return {};
    }
    auto out = rest.first(n);
    rest = rest.subspan(n);
    return out;
  }
  unsigned uint(std::size_t n) {
    unsigned v = 0;
    for (std::uint8_t b : take(n)) v = (v << 8) | b;
    return v;
  }
  std::span<const std::uint8_t> vec(std::size_t len_bytes) { return take(uint(len_bytes)); }
};

const char* kex_mode_name(std::uint8_t mode) {
  switch (mode) {
    case 0:
      return "psk_ke";
    case 1:
      return "psk_dhe_ke";
    default:
      return "unknown";
  }
}

void parse_extensions(Reader& r, bool from_client, HelloObservation* obs) {
  Reader exts{r.vec(2)};
  while (!exts.bad && !exts.rest.empty()) {
    const unsigned type = exts.uint(2);
    Reader body{exts.vec(2)};
    if (type == kExtKeyShare)
      (from_client ? obs->client_sent_key_share : obs->server_sent_key_share) = true;
    if (type == kExtPreSharedKey)
      (from_client ? obs->client_sent_psk : obs->server_sent_psk) = true;
    if (type == kExtPskKexModes && from_client) {
      for (std::uint8_t mode : body.vec(1)) {
        if (!obs->client_psk_kex_modes.empty()) obs->client_psk_kex_modes += ",";
        obs->client_psk_kex_modes += kex_mode_name(mode);
      }
      obs->parse_error |= body.bad;
    }
  }
  obs->parse_error |= exts.bad || r.bad;
}

void parse_client_hello(Reader r, HelloObservation* obs) {
  obs->client_hello_seen = true;
  r.take(2 + 32);  // legacy_version, random
  r.vec(1);        // legacy_session_id
  r.vec(2);        // cipher_suites
  r.vec(1);        // legacy_compression_methods
  parse_extensions(r, true, obs);
}

void parse_server_hello(Reader r, HelloObservation* obs) {
  r.take(2);  // legacy_version
  auto random = r.take(32);
  r.vec(1);       // legacy_session_id_echo
  r.take(2 + 1);  // cipher_suite, legacy_compression_method
  if (!r.bad && std::equal(random.begin(), random.end(), std::begin(kHrrRandom))) {
    // Record the retry but keep looking at the real ServerHello that follows it.
    obs->hello_retry_request = true;
    return;
  }
  obs->server_hello_seen = true;
  parse_extensions(r, false, obs);
}

void on_message(int /*write_p*/, int /*version*/, int content_type, const void* buf, size_t len,
                SSL* /*ssl*/, void* arg) {
  // Only whole handshake messages; OpenSSL also reports record headers and inner content types.
  if (content_type != SSL3_RT_HANDSHAKE || len < 4) return;
  auto* obs = static_cast<HelloObservation*>(arg);
  Reader r{std::span(static_cast<const std::uint8_t*>(buf), len)};
  const unsigned type = r.uint(1);
  Reader body{r.vec(3)};
  if (r.bad) {
    obs->parse_error = true;
    return;
  }
  if (type == kClientHello) parse_client_hello(body, obs);
  if (type == kServerHello) parse_server_hello(body, obs);
}

}  // namespace

void observe_hellos(SSL* client, HelloObservation* obs) {
  SSL_set_msg_callback(client, on_message);
  SSL_set_msg_callback_arg(client, obs);
}

}  // namespace dsekp::bench::detail
