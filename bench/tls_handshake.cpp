// TlsHandshakeBench: one-time setup, verified warm-up and timed handshake loop, statistics.
//
// Why: see tls_handshake.hpp. Setup (key, certificate, PSK, SSL_CTXs) happens once because a
// deployed client or server also pays it once; per handshake only SSL_new, the handshake and
// SSL_free are timed. The first handshake of every run is fully verified, including the wire.
#include "tls_handshake.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <stdexcept>
#include <vector>

#include <openssl/rand.h>

#include "tls_credentials.hpp"
#include "tls_handshake_modes.hpp"
#include "tls_handshake_pump.hpp"
#include "tls_mode_check.hpp"
#include "tls_psk.hpp"

namespace dsekp::bench {

const char* tls_mode_name(TlsMode mode) {
  switch (mode) {
    case TlsMode::ecdhe_x25519_p256_cert:
      return "tls13_x25519_p256_cert";
    case TlsMode::psk_dhe_ke:
      return "tls13_psk_dhe_ke";
    case TlsMode::psk_ke:
      return "tls13_psk_ke";
  }
  return "tls13_unknown";
}

namespace {

using namespace detail;

constexpr std::array kModes = {TlsMode::ecdhe_x25519_p256_cert, TlsMode::psk_dhe_ke,
                               TlsMode::psk_ke};

TlsPsk random_psk() {
  TlsPsk key{};
  if (RAND_bytes(key.data(), static_cast<int>(key.size())) != 1) {
    throw std::runtime_error("TLS bench: RAND_bytes: " + drain_openssl_errors());
  }
  return key;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

struct TlsHandshakeBench::Impl {
  TlsBenchOptions options;
  TlsServerCredentials creds;
  // Declared before the contexts: the PSK callbacks reference these sessions.
  TlsPskSessions psk;
  std::array<TlsContextPair, kModes.size()> contexts;

  explicit Impl(TlsBenchOptions opts) : options(std::move(opts)) {
    creds = make_self_signed_p256("dsekp-bench.local");
    const TlsPsk client_key = random_psk();
    psk = make_psk_sessions(client_key, options.server_psk_override.value_or(client_key));
    for (TlsMode mode : kModes) at(mode) = make_mode_contexts(mode, creds, psk);
  }

  TlsContextPair& at(TlsMode mode) { return contexts.at(static_cast<std::size_t>(mode)); }

  // One handshake checked against OpenSSL's report and the wire. Empty string on success.
  std::string verified_handshake(TlsMode mode, HelloObservation* hellos, HandshakeFacts* facts) {
    HandshakeOutcome out = run_handshake(at(mode).client.get(), at(mode).server.get(), hellos);
    if (!out.ok) return out.error;
    *facts = out.facts;
    std::string mismatch = check_facts(mode, out.facts);
    const std::string wire = check_hellos(mode, *hellos);
    if (!wire.empty()) mismatch += (mismatch.empty() ? "" : "; ") + wire;
    return mismatch;
  }

  // One handshake for warm-up or timing; throws unless it succeeded as `mode`.
  double checked_handshake(TlsMode mode) {
    HandshakeOutcome out = run_handshake(at(mode).client.get(), at(mode).server.get(), nullptr);
    std::string problem = out.ok ? check_facts(mode, out.facts) : out.error;
    if (!problem.empty()) {
      throw std::runtime_error(std::string(tls_mode_name(mode)) + ": " + problem);
    }
    return out.cpu_us;
  }
};

TlsHandshakeBench::TlsHandshakeBench(TlsBenchOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

TlsHandshakeBench::~TlsHandshakeBench() = default;

bool TlsHandshakeBench::run_once(TlsMode mode, std::string* error) {
  HelloObservation hellos;
  HandshakeFacts facts;
  const std::string problem = impl_->verified_handshake(mode, &hellos, &facts);
  if (error != nullptr) *error = problem;
  return problem.empty();
}

TlsHandshakeStats TlsHandshakeBench::run(TlsMode mode, std::size_t iterations) {
  if (iterations == 0) throw std::invalid_argument("TLS bench: iterations must be > 0");
  TlsHandshakeStats stats;
  stats.mode = mode;

  HelloObservation hellos;
  HandshakeFacts facts;
  const std::string problem = impl_->verified_handshake(mode, &hellos, &facts);
  if (!problem.empty()) {
    throw std::runtime_error(std::string(tls_mode_name(mode)) + ": " + problem);
  }
  // Every timed handshake re-checks these facts, so they hold for the whole sample.
  stats.negotiated_group = group_name(facts.server_group_nid);
  stats.used_psk = facts.client_reused && facts.server_reused;
  stats.peer_verified = facts.peer_cert_present && facts.verify_result == X509_V_OK;
  stats.server_sent_key_share = hellos.server_sent_key_share;
  stats.client_sent_key_share = hellos.client_sent_key_share;
  stats.client_psk_kex_modes = hellos.client_psk_kex_modes;

  // Warm caches, lazy provider/algorithm fetches and the allocator before measuring.
  for (std::size_t i = 0; i < impl_->options.warmup_iterations; ++i) impl_->checked_handshake(mode);

  std::vector<double> samples;
  samples.reserve(iterations);
  for (std::size_t i = 0; i < iterations; ++i) samples.push_back(impl_->checked_handshake(mode));

  stats.iterations = samples.size();
  stats.cpu_us_mean =
      std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
  stats.cpu_us_median = median_of(samples);
  stats.cpu_us_min = *std::min_element(samples.begin(), samples.end());
  return stats;
}

}  // namespace dsekp::bench
