// The edge's HTTP observability endpoint (cpp-httplib, plain HTTP):
//   GET /metrics  200, Prometheus text format 0.0.4 of the registry
//   GET /healthz  200 "ok", or 503 "not ready: <detail>" when the health check says so (the
//                 session store or the broker is down); a readiness probe for an orchestrator
//   anything else 404
//
// Bound to 127.0.0.1:9464 by default. Loopback, because the endpoint has neither TLS nor
// authentication and its counters are not harmless: rejection rates by reason (bad_proof,
// replay, unknown_device) and traffic volume tell an attacker how its probing is received. A
// Prometheus on the same host scrapes loopback; exposing it elsewhere (a management interface,
// or behind a TLS reverse proxy) must be the operator's explicit choice. 9464 is the usual
// default of OpenTelemetry's Prometheus exporters, so scrape configs often expect it; port 0
// binds any free port and port() reports it (tests).
//
// start() binds synchronously, so a taken port or a bad address is an error the daemon reports at
// start-up, and serves from a background thread; stop() (and the destructor) shuts it down and
// joins every thread, each wait bounded by the read/write timeouts below.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "edge/metrics/metrics_registry.hpp"

namespace dsekp::edge::metrics {

struct HealthReport {
  bool ready = true;
  std::string detail;  // why not ready (one line, for the operator); ignored when ready
};

/// Called from an HTTP thread on every GET /healthz, concurrently with the edge's own thread: it
/// must only read thread-safe state (e.g. atomics the edge sets) and return quickly. An exception
/// it throws is answered with 503.
using HealthCheck = std::function<HealthReport()>;

struct MetricsServerOptions {
  std::string bind_address = "127.0.0.1";
  std::uint16_t port = 9464;  // 0: any free port, see MetricsServer::port()
  HealthCheck health;         // empty: always ready
};

class MetricsServer {
 public:
  /// `registry` must outlive the server.
  MetricsServer(const Registry& registry, MetricsServerOptions options);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  /// Binds and starts serving. False with `error` set when the address cannot be bound (in use,
  /// not local, unparsable) or the server is already started.
  [[nodiscard]] bool start(std::string& error);

  /// Stops serving and joins the server thread. Idempotent; safe without start().
  void stop() noexcept;

  /// The bound port once started (the chosen one if options.port was 0), else 0.
  [[nodiscard]] std::uint16_t port() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dsekp::edge::metrics
