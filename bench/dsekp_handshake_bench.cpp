// DSEKP handshake CPU-cost measurement (see dsekp_handshake_bench.hpp).
#include "dsekp_handshake_bench.hpp"

#include <array>
#include <ctime>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "bench_credentials.hpp"
#include "cpu_timer.hpp"
#include "dsekp/device_session.hpp"
#include "dsekp/edge_session.hpp"

namespace dsekp::bench {
namespace {

template <typename Frame, typename Decode>
Frame through_json(const Frame& f, Decode decode) {
  std::array<std::uint8_t, 512> buf{};
  std::size_t n = 0;
  require(encode(f, Encoding::json, buf, n), "encode");
  Frame out;
  require(decode(ByteView(buf.data(), n), out), "decode");
  return out;
}

// A device's storage that keeps the secret in memory: the bench times the computation, not a
// flash write.
class MemoryStore final : public SecretStore {
 public:
  bool store_secret(const DevSecret& secret, std::uint32_t) noexcept override {
    secret_ = secret.clone();
    return true;
  }

 private:
  DevSecret secret_;
};

// Thread CPU ns per call of `fn`, one sample per batch of `batch` calls (reading the thread CPU
// clock is a system call, so single calls of a few microseconds are not timed).
template <typename F>
std::vector<double> batch_samples_ns(std::size_t iterations, std::size_t batch, F&& fn) {
  const std::size_t batches = iterations < batch ? 1 : iterations / batch;
  std::vector<double> samples;
  samples.reserve(batches);
  for (std::size_t b = 0; b < batches; ++b) {
    const std::uint64_t start = thread_cpu_ns();
    for (std::size_t i = 0; i < batch; ++i) fn();
    samples.push_back(static_cast<double>(thread_cpu_ns() - start) / static_cast<double>(batch));
  }
  return samples;
}

}  // namespace

DsekpHandshakeStats measure_dsekp_handshake(CryptoBackend& device_crypto,
                                            CryptoBackend& edge_crypto, Rng& rng,
                                            std::size_t iterations, HandshakeScope scope) {
  const bool with_codec = scope.with_codec;
  const bool confirmation = scope.confirmation || scope.ratchet;
  const DeviceCredentials credentials = bench_credentials();
  EdgeConfig config;
  config.edge_salt = credentials.edge_salt;
  config.init_rate.capacity = 0;  // the bench measures crypto, not the rate limiter
  EdgeProtocol edge(edge_crypto, config);
  const auto now_s = static_cast<std::uint32_t>(std::time(nullptr));
  MemoryStore store;
  const std::array<std::uint8_t, 19> reading{};
  std::array<std::uint8_t, kMaxPayloadSize> plaintext{};

  const auto one = [&]() {
    DeviceRatchet ratchet(store);
    DeviceConfig device_config;
    if (scope.ratchet) device_config.ratchet = &ratchet;
    DeviceSession device(device_crypto, credentials, device_config);
    EdgeDeviceState state;
    if (scope.ratchet && !enable_ratchet(state, credentials.dev_id, credentials.dev_secret))
      throw std::runtime_error("enable_ratchet");
    InitFrame init;
    require(device.start_handshake(now_s, rng, init), "start_handshake");
    if (with_codec)
      init = through_json(init, [](ByteView w, InitFrame& o) { return decode_init(w, o); });
    InitOutcome outcome;
    require(edge.handle_init(init, credentials.dev_secret, state, std::uint64_t{now_s} * 1000, rng,
                             outcome),
            "handle_init");
    AckFrame ack = outcome.ack;
    if (with_codec)
      ack = through_json(ack, [](ByteView w, AckFrame& o) { return decode_ack(w, o); });
    require(device.handle_ack(ack), "handle_ack");
    if (!confirmation) return;
    DataFrame frame;
    require(device.seal(reading, std::uint64_t{now_s} * 1000, frame), "seal");
    DataOutcome opened;
    require(edge.open_data(frame, state, std::uint64_t{now_s} * 1000, plaintext, opened),
            "open_data");
    if (opened.ratcheted != scope.ratchet) throw std::runtime_error("ratchet step");
  };

  for (std::size_t i = 0; i < 50; ++i) one();  // warm-up: caches, lazy library init
  constexpr std::size_t kBatch = 25;
  std::vector<double> samples = batch_samples_ns(iterations, kBatch, one);
  for (double& s : samples) s /= 1000.0;  // per handshake, in microseconds
  DsekpHandshakeStats stats;
  stats.backend = std::string(device_crypto.name()) + "/" + edge_crypto.name();
  stats.with_codec = with_codec;
  stats.confirmation = confirmation;
  stats.ratchet = scope.ratchet;
  stats.iterations = samples.size() * kBatch;
  stats.cpu_us_mean =
      std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
  stats.cpu_us_median = median_of(samples);
  stats.cpu_us_min = *std::min_element(samples.begin(), samples.end());
  return stats;
}

double measure_ratchet_step_ns(CryptoBackend& crypto, std::size_t iterations) {
  const DeviceCredentials credentials = bench_credentials();
  DevSecret secret = credentials.dev_secret.clone();
  const auto step = [&] {
    require(derive_next_secret(crypto, secret, credentials.edge_salt, credentials.dev_id, secret),
            "derive_next_secret");
  };
  for (std::size_t i = 0; i < 100; ++i) step();  // warm-up
  return median_of(batch_samples_ns(iterations, 100, step));
}

}  // namespace dsekp::bench
