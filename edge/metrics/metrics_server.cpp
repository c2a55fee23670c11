// The /metrics and /healthz endpoint on cpp-httplib (see metrics_server.hpp).
#include "edge/metrics/metrics_server.hpp"

#include <fcntl.h>
#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <thread>
#include <utility>

#include "edge/metrics/prometheus_text.hpp"

namespace dsekp::edge::metrics {
namespace {

constexpr const char* kPlainText = "text/plain; charset=utf-8";

// httplib's default socket options set SO_REUSEPORT on Linux, which lets a second process bind
// the same port and silently take half the scrapes. SO_REUSEADDR alone still allows a restart
// while old connections sit in TIME_WAIT, and a second edge on the same port now fails to start.
// FD_CLOEXEC: a child process must not inherit the listening socket and keep the port taken.
void socket_options(int sock) {
  int yes = 1;
  ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  ::fcntl(sock, F_SETFD, FD_CLOEXEC);
}

HealthReport run_health_check(const HealthCheck& check) {
  if (!check) return {};
  try {
    return check();
  } catch (const std::exception& e) {
    return {false, std::string("health check failed: ") + e.what()};
  } catch (...) {
    return {false, "health check failed"};
  }
}

}  // namespace

struct MetricsServer::Impl {
  Impl(const Registry& reg, MetricsServerOptions opts) : registry(reg), options(std::move(opts)) {}

  const Registry& registry;
  MetricsServerOptions options;
  std::unique_ptr<httplib::Server> server;  // null while stopped
  std::thread thread;
  std::atomic<bool> listen_returned{false};
  std::uint16_t bound_port = 0;

  void configure(httplib::Server& srv) const {
    // A scrape and a health probe may overlap; more threads would only idle.
    srv.new_task_queue = [] { return new httplib::ThreadPool(2); };
    srv.set_socket_options(socket_options);
    // One request per connection and short timeouts: stop() waits for in-flight connections, so
    // these bound how long a slow or idle client can delay shutdown (a scrape answers in ms;
    // Prometheus reconnects per scrape anyway at its default 15 s interval).
    srv.set_keep_alive_max_count(1);
    srv.set_keep_alive_timeout(1);
    srv.set_read_timeout(2, 0);
    srv.set_write_timeout(2, 0);

    const Registry* reg = &registry;
    srv.Get("/metrics", [reg](const httplib::Request&, httplib::Response& res) {
      res.set_content(write_text(reg->collect()), std::string(kTextFormatContentType));
    });
    HealthCheck check = options.health;
    srv.Get("/healthz", [check](const httplib::Request&, httplib::Response& res) {
      const HealthReport report = run_health_check(check);
      if (report.ready) {
        res.status = 200;
        res.set_content("ok\n", kPlainText);
      } else {
        res.status = 503;
        res.set_content("not ready: " + report.detail + "\n", kPlainText);
      }
    });
  }
};

MetricsServer::MetricsServer(const Registry& registry, MetricsServerOptions options)
    : impl_(std::make_unique<Impl>(registry, std::move(options))) {}

MetricsServer::~MetricsServer() {
  stop();
}

bool MetricsServer::start(std::string& error) {
  if (impl_->server) {
    error = "metrics server already started";
    return false;
  }
  auto server = std::make_unique<httplib::Server>();
  impl_->configure(*server);

  const std::string& host = impl_->options.bind_address;
  errno = 0;
  int port = -1;
  if (impl_->options.port == 0) {
    port = server->bind_to_any_port(host);
  } else if (server->bind_to_port(host, impl_->options.port)) {
    port = impl_->options.port;
  }
  if (port <= 0) {
    const int err = errno;
    error = "metrics server cannot listen on " + host + ":" + std::to_string(impl_->options.port);
    if (err != 0) error += std::string(": ") + std::strerror(err);
    return false;
  }

  impl_->bound_port = static_cast<std::uint16_t>(port);
  impl_->listen_returned = false;
  impl_->server = std::move(server);
  // The socket already listens (bind_to_port calls listen()), so connections queue in the
  // kernel's backlog until the thread's accept loop picks them up.
  impl_->thread = std::thread([srv = impl_->server.get(), done = &impl_->listen_returned] {
    srv->listen_after_bind();
    done->store(true);
  });
  return true;
}

void MetricsServer::stop() noexcept {
  if (!impl_ || !impl_->server) return;
  httplib::Server& srv = *impl_->server;
  // httplib's stop() only closes the socket once listen_after_bind() has flagged itself running
  // (its first statement); a stop() before that would be lost and leave the thread in accept()
  // for ever. So wait for the thread to get that far: it only needs to be scheduled.
  while (!srv.is_running() && !impl_->listen_returned.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (srv.is_running()) srv.stop();
  // Returns once the accept loop has ended and the pool has finished its in-flight requests
  // (bounded by the timeouts set in configure()).
  impl_->thread.join();
  impl_->server.reset();
  impl_->bound_port = 0;
}

std::uint16_t MetricsServer::port() const noexcept {
  return impl_->bound_port;
}

}  // namespace dsekp::edge::metrics
