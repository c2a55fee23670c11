// InProcessEdge (see in_process_edge.hpp).
#include "bench/edge/in_process_edge.hpp"

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "crypto/openssl/openssl_crypto.hpp"
#include "edge/daemon/edge_daemon.hpp"
#include "edge/daemon/edge_storage.hpp"
#include "edge/daemon/unix_clock.hpp"
#include "edge/registry/device_registry.hpp"
#include "edge/service/edge_service.hpp"
#include "edge/service/message_batch.hpp"

namespace dsekp::bench::edge {

namespace service = ::dsekp::edge;

struct InProcessEdge::Parts {
  Parts(const std::string& registry_db, const std::string& logs_dir, bool csv)
      : storage([&] {
          service::daemon::EdgeDaemonOptions o;
          o.registry_db = registry_db;
          o.logs_dir = logs_dir;
          o.csv = csv;
          return o;
        }()),
        registry(open_registry(registry_db)),
        edge({*registry, storage.sessions(), storage.generations(), storage.sink(), crypto, rng,
              nullptr},
             [] {
               service::EdgeServiceConfig c;
               c.psk_enabled = true;
               return c;
             }()),
        batch(
            edge, [this](const service::Publish&) { ++published; },
            [this] {
              service::MessageBatchOptions o;
              o.settled = [this](const service::SettledMessage& m) {
                if (!m.result.ok() && refused++ == 0) first_refusal = m.result.reason_name();
              };
              return o;
            }()) {}

  static std::unique_ptr<service::DeviceRegistry> open_registry(const std::string& path) {
    std::unique_ptr<service::DeviceRegistry> r;
    if (const auto s = service::DeviceRegistry::open(path, service::OpenMode::existing_only, r);
        !s.ok())
      throw std::runtime_error("in-process edge: registry: " + s.message());
    return r;
  }

  service::daemon::EdgeStorage storage;
  OpenSslCrypto crypto;
  OpenSslRng rng;
  std::unique_ptr<service::DeviceRegistry> registry;
  service::EdgeService edge;
  service::MessageBatch batch;
  std::size_t refused = 0;
  std::string first_refusal;  // the reason of the first message refused
  std::size_t published = 0;  // a drain of DATA frames publishes nothing
};

InProcessEdge::InProcessEdge(const std::string& registry_db, const std::string& logs_dir, bool csv)
    : parts_(std::make_unique<Parts>(registry_db, logs_dir, csv)) {}

InProcessEdge::~InProcessEdge() = default;

std::size_t InProcessEdge::take_refused(std::string& first_reason) {
  first_reason = std::exchange(parts_->first_refusal, {});
  if (first_reason.empty() && parts_->published > 0) first_reason = "answered with a publish";
  return std::exchange(parts_->refused, 0) + std::exchange(parts_->published, 0);
}

void InProcessEdge::message(std::string_view, ByteView payload) {
  const std::uint64_t now_us = service::daemon::unix_us_now();
  const auto& topics = parts_->edge.topics();
  parts_->batch.handle(psk_ ? topics.psk() : topics.data(), payload, now_us / 1000, now_us);
}

void InProcessEdge::chunk_end() {
  parts_->batch.end();
}

}  // namespace dsekp::bench::edge
