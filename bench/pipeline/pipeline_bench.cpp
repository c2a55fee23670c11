// run_pipeline_bench (see pipeline_bench.hpp).
#include "bench/pipeline/pipeline_bench.hpp"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_credentials.hpp"
#include "bench/bench_device.hpp"
#include "bench/cpu_timer.hpp"
#include "bench/work_dir.hpp"
#include "crypto/openssl/openssl_crypto.hpp"
#include "dsekp/codec.hpp"
#include "dsekp/device_session.hpp"
#include "edge/daemon/edge_daemon.hpp"
#include "edge/daemon/edge_storage.hpp"
#include "edge/daemon/unix_clock.hpp"
#include "edge/registry/device_registry.hpp"
#include "edge/service/edge_service.hpp"
#include "edge/service/message_batch.hpp"

namespace dsekp::bench::pipeline {

PipelineFigures run_pipeline_bench(const PipelineBenchOptions& o) {
  if (o.count == 0 || o.devices == 0 || o.batch == 0 || o.repetitions == 0)
    throw std::runtime_error("count, devices, batch and repetitions must be at least 1");
  const WorkDir dir("dsekp-bench-pipeline-");
  std::unique_ptr<edge::DeviceRegistry> registry;
  if (const auto s = edge::DeviceRegistry::open(dir.file("registry.db"),
                                                edge::OpenMode::create_if_missing, registry);
      !s.ok())
    throw std::runtime_error("registry: " + s.message());
  std::vector<edge::DeviceMaterial> materials(o.devices);
  for (std::size_t i = 0; i < o.devices; ++i)
    if (const auto s = registry->add("bench-dev-" + std::to_string(i), materials[i]); !s.ok())
      throw std::runtime_error("registry: " + s.message());

  edge::daemon::EdgeDaemonOptions daemon_options;
  daemon_options.registry_db = dir.file("registry.db");
  daemon_options.logs_dir = dir.file("logs");
  daemon_options.csv = o.csv;
  edge::daemon::EdgeStorage storage(daemon_options);
  OpenSslCrypto crypto;
  OpenSslRng rng;
  edge::EdgeServiceConfig config;
  config.psk_enabled = true;
  config.init_rate.capacity = 0;  // the handshakes below come back to back
  edge::EdgeService service(
      {*registry, storage.sessions(), storage.generations(), storage.sink(), crypto, rng, nullptr},
      config);
  std::vector<edge::Publish> published;
  std::size_t refused = 0;
  edge::MessageBatchOptions batch_options;
  batch_options.settled = [&refused](const edge::SettledMessage& m) {
    if (!m.result.ok()) ++refused;
  };
  edge::MessageBatch batch(
      service, [&published](const edge::Publish& p) { published.push_back(p); }, batch_options);

  const Encoding enc = o.compact ? Encoding::compact : Encoding::json;
  const std::uint64_t now_ms = edge::daemon::unix_ms_now();
  std::vector<std::unique_ptr<BenchDevice>> devices;
  for (const edge::DeviceMaterial& m : materials) {
    devices.push_back(std::make_unique<BenchDevice>(crypto, m));
    DeviceSession& s = devices.back()->session;
    InitFrame init;
    require(s.start_handshake(static_cast<std::uint32_t>(now_ms / 1000), rng, init),
            "start_handshake");
    published.clear();
    batch.handle(service.topics().init(), encode_frame(init, enc), now_ms, now_ms * 1000);
    batch.end();
    if (published.size() != 1) throw std::runtime_error("a handshake got no ACK");
    AckFrame ack;
    require(decode_ack(published.front().payload, ack), "decode_ack");
    require(s.handle_ack(ack), "handle_ack");
  }

  PipelineFigures figures;
  std::vector<double> ratios;
  for (std::size_t rep = 0; rep < o.repetitions; ++rep) {
    std::vector<Frame> dsekp_frames;
    std::vector<Frame> psk_frames;
    seal_frames(devices, crypto, rng, rep * o.count, o.count, now_ms, enc, dsekp_frames,
                psk_frames);
    const auto drain = [&](const std::vector<Frame>& frames, const std::string& topic) {
      refused = 0;
      const std::uint64_t start = thread_cpu_ns();
      for (std::size_t k = 0; k < frames.size(); ++k) {
        batch.handle(topic, frames[k], now_ms, now_ms * 1000);
        if ((k + 1) % o.batch == 0) batch.end();
      }
      batch.end();
      const std::uint64_t spent = thread_cpu_ns() - start;
      if (refused != 0)
        throw std::runtime_error(std::to_string(refused) + " frames on " + topic + " refused");
      return static_cast<double>(spent) / 1e3 / static_cast<double>(frames.size());
    };
    figures.dsekp_us_per_frame.push_back(drain(dsekp_frames, service.topics().data()));
    figures.psk_us_per_frame.push_back(drain(psk_frames, service.topics().psk()));
    ratios.push_back(figures.dsekp_us_per_frame.back() / figures.psk_us_per_frame.back());
  }
  figures.dsekp_median = median_of(figures.dsekp_us_per_frame);
  figures.psk_median = median_of(figures.psk_us_per_frame);
  figures.dsekp_over_psk = median_of(ratios);
  return figures;
}

}  // namespace dsekp::bench::pipeline
