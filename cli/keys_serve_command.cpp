// `dsekp keys serve` (see keys_serve_command.hpp).
#include "keys_serve_command.hpp"

#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "edge/control_api/control_server.hpp"
#include "edge/daemon/state_reset.hpp"
#include "edge/registry/device_material.hpp"
#include "edge/registry/secure_file.hpp"
#include "usage_error.hpp"

namespace dsekp::cli {
namespace {

struct ServeOptions {
  std::string db;
  std::string listen;  // empty: <db>.api.sock, beside the registry (in its 0700 directory)
  std::string token_file;
  std::string broker = "localhost:1883";
  edge::daemon::StateLocation state;
};

int run_serve(const ServeOptions& o) {
  edge::BrokerAddress broker;
  if (const auto s = edge::parse_broker_address(o.broker, broker); !s.ok())
    throw UsageError("--broker: " + s.message());
  edge::control_api::ControlServerOptions options;
  options.socket_path = o.listen.empty() ? o.db + ".api.sock" : o.listen;
  if (const auto s = edge::read_password_file(o.token_file, options.token); !s.ok())
    throw std::runtime_error("--token-file: " + s.message());
  options.registry_db = o.db;
  options.default_broker = o.broker;
  options.remove_state = [o](const std::string& dev_id, bool& found, std::string& error) {
    edge::daemon::StateLocation where = o.state;
    where.registry_db = o.db;
    if (const char* password = std::getenv("DSEKP_REDIS_PASSWORD")) where.store_password = password;
    return edge::daemon::reset_device_state(where, dev_id, found, error);
  };
  options.log = [](const std::string& line) {
    std::fprintf(stderr, "dsekp keys serve: %s\n", line.c_str());
  };

  // Blocked before the server's threads exist; only sigwait() below receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  const std::string socket_path = options.socket_path;
  std::string error;
  auto server = edge::control_api::ControlServer::start(std::move(options), error);
  if (server == nullptr) throw std::runtime_error(error);
  std::thread serving([&server] { server->serve(); });
  std::fprintf(stderr,
               "dsekp keys serve: listening on %s (curl --unix-socket %s "
               "http://localhost/v1/devices)\n",
               socket_path.c_str(), socket_path.c_str());
  int sig = 0;
  sigwait(&signals, &sig);
  server->stop();
  serving.join();
  std::fprintf(stderr, "dsekp keys serve: signal %d, stopped\n", sig);
  return 0;
}

}  // namespace

void add_keys_serve_command(CLI::App& keys) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* serve = keys.add_subcommand(
      "serve",
      "The device operations over HTTP for a fleet tool (add, list, show, material, rotate, "
      "remove under /v1/devices), on a Unix socket, behind a bearer token");
  serve->add_option("--db", o->db, "Registry database (SQLite, mode 0600)")->required();
  serve->add_option("--listen", o->listen,
                    "The Unix socket to listen on, created 0660 (default: <db>.api.sock, beside "
                    "the registry)");
  serve
      ->add_option("--token-file", o->token_file,
                   "File whose first line is the bearer token (at least 32 characters; mode "
                   "0600 or 0640), e.g. from `openssl rand -hex 32`")
      ->required();
  serve->add_option("--broker", o->broker, "Broker of a device added without one, HOST:PORT")
      ->capture_default_str();
  serve->add_option("--state-db", o->state.state_db,
                    "The edge's state database, where a removed device's state goes from "
                    "(default: <db>.state)");
  serve->add_option("--store", o->state.store,
                    "The edge's session store, as given to `dsekp edge --store` (the password "
                    "in DSEKP_REDIS_PASSWORD)");
  serve->callback([o] {
    if (const int code = run_serve(*o); code != 0) std::exit(code);
  });
}

}  // namespace dsekp::cli
