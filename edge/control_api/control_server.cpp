// The provisioning control API on cpp-httplib (see control_server.hpp).
#include "edge/control_api/control_server.hpp"

#include <fcntl.h>
#include <httplib.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <utility>

#include "edge/broker_admin/fleet_change.hpp"
#include "edge/control_api/device_json.hpp"
#include "edge/logging/printable.hpp"
#include "edge/registry/device_material.hpp"
#include "edge/registry/device_registry.hpp"

namespace dsekp::edge::control_api {
namespace {

using nlohmann::ordered_json;

constexpr const char* kJson = "application/json";
constexpr std::size_t kMaxBody = 16 * 1024;
constexpr const char* kDevicePath = R"(/v1/devices/([A-Za-z0-9._-]{1,64}))";

std::array<unsigned char, SHA256_DIGEST_LENGTH> digest(const std::string& text) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> out{};
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), out.data());
  return out;
}

void answer(httplib::Response& res, int status, const ordered_json& body) {
  res.status = status;
  res.set_content(body.dump(2) + "\n", kJson);
  res.set_header("Cache-Control", "no-store");  // bodies may hold DEV_SECRETs
}

void fail(httplib::Response& res, int status, const std::string& error,
          const std::string& message) {
  answer(res, status, {{"error", error}, {"message", message}});
}

// httplib's own refusals (a malformed request line, a body over the limit, no route).
const char* error_name(int status) {
  switch (status) {
    case 400:
      return "bad_request";
    case 404:
      return "not_found";
    case 413:
      return "payload_too_large";
    default:
      return "http_error";
  }
}

bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// A server already answering on `path` (connect succeeds): true.
bool socket_in_use(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  const bool in_use = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return in_use;
}

int http_status(RegistryErrc code) {
  switch (code) {
    case RegistryErrc::invalid_dev_id:
    case RegistryErrc::invalid_name:
    case RegistryErrc::invalid_argument:
      return 400;
    case RegistryErrc::not_found:
      return 404;
    case RegistryErrc::already_exists:
    case RegistryErrc::name_conflict:
    case RegistryErrc::secret_erased:
      return 409;
    default:
      return 500;
  }
}

void fail(httplib::Response& res, const RegistryStatus& s) {
  fail(res, http_status(s.code()), registry_errc_name(s.code()), s.message());
}

// A child process must not inherit the listening socket (httplib's default options are for TCP).
void socket_options(int sock) {
  ::fcntl(sock, F_SETFD, FD_CLOEXEC);
}

}  // namespace

struct ControlServer::Impl {
  ControlServerOptions options;
  std::array<unsigned char, SHA256_DIGEST_LENGTH> token_digest{};
  BrokerAddress default_broker;  // options.default_broker, parsed
  std::unique_ptr<DeviceRegistry> registry;
  struct stat registry_file {};  // the file opened: a replaced one is refused, not written
  std::mutex mutex;              // one request at a time on the registry
  httplib::Server server;
  bool stopped = false;

  bool authorized(const httplib::Request& req) const {
    const std::string header = req.get_header_value("Authorization");
    constexpr std::size_t kScheme = 7;  // "Bearer " (the scheme is case-insensitive)
    if (header.size() <= kScheme || header[kScheme - 1] != ' ') return false;
    for (std::size_t i = 0; i + 1 < kScheme; ++i)
      if (std::tolower(static_cast<unsigned char>(header[i])) != "bearer"[i]) return false;
    const auto given = digest(header.substr(kScheme));
    return CRYPTO_memcmp(given.data(), token_digest.data(), given.size()) == 0;
  }

  // Before the body is read: the token, and a body only of a declared length (httplib would
  // read a chunked or compressed body past the size limit first).
  httplib::Server::HandlerResponse pre_route(const httplib::Request& req, httplib::Response& res) {
    if (!authorized(req)) {
      res.set_header("WWW-Authenticate", "Bearer");
      fail(res, 401, "unauthorized", "a valid Authorization: Bearer token is required");
    } else if (req.has_header("Transfer-Encoding")) {
      fail(res, 411, "length_required", "send the body with a Content-Length, not chunked");
    } else if (req.has_header("Content-Encoding")) {
      fail(res, 415, "unsupported_encoding", "send the body uncompressed");
    } else {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    res.set_header("Connection", "close");
    return httplib::Server::HandlerResponse::Handled;
  }

  bool registry_replaced() const {
    struct stat now {};
    return ::stat(options.registry_db.c_str(), &now) != 0 || !same_file(now, registry_file);
  }

  // The material as JSON, with what the broker did about the change.
  ordered_json material(const DeviceMaterial& m, const ordered_json& broker_update) const {
    BrokerAddress broker = default_broker;
    if (BrokerAddress recorded; !m.broker.empty() && parse_broker_address(m.broker, recorded).ok())
      broker = recorded;
    ordered_json out = ordered_json::parse(material_json(m, broker, MaterialMode::dsekp_only));
    if (!broker_update.is_null()) out["broker_update"] = broker_update;
    return out;
  }

  ordered_json apply_to_broker() {
    broker_admin::BrokerUpdate update;
    const RegistryStatus s = broker_admin::apply_to_broker(*registry, update);
    if (!update.on_plugin)
      return {{"update", "files"},
              {"message",
               s.ok() ? "rerun `dsekp keys broker-config` and reload the broker" : s.message()}};
    if (!s.ok())
      return {{"update", "failed"},
              {"broker", update.broker},
              {"message", s.message() + "; `dsekp keys broker-sync` finishes it"}};
    return {{"update", "plugin"},
            {"broker", update.broker},
            {"clients_created", update.summary.clients_created},
            {"clients_changed", update.summary.clients_changed},
            {"clients_deleted", update.summary.clients_deleted}};
  }

  void list(httplib::Response& res) {
    std::vector<DeviceInfo> devices;
    if (const RegistryStatus s = registry->list(devices); !s.ok()) return fail(res, s);
    ordered_json out = ordered_json::array();
    for (const DeviceInfo& d : devices) out.push_back(device_info_json(d));
    answer(res, 200, out);
  }

  void add(const httplib::Request& req, httplib::Response& res) {
    const nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
    if (!body.is_object() || !body.contains("dev_id") || !body["dev_id"].is_string())
      return fail(res, 400, "bad_request", R"(expected {"dev_id":"...","broker":"HOST:PORT"})");
    for (const auto& [key, value] : body.items())
      if (key != "dev_id" && key != "broker")
        return fail(res, 400, "bad_request", "unknown field \"" + key + "\"");
    const std::string dev_id = body["dev_id"].get<std::string>();
    std::string broker = options.default_broker;
    if (body.contains("broker")) {
      if (!body["broker"].is_string())
        return fail(res, 400, "bad_request", "\"broker\" must be a HOST:PORT string");
      broker = body["broker"].get<std::string>();
    }
    BrokerAddress parsed;
    if (const RegistryStatus s = parse_broker_address(broker, parsed); !s.ok())
      return fail(res, 400, "bad_request", "broker: " + s.message());
    if (const RegistryStatus s = broker_admin::check_broker_name_free(*registry, dev_id); !s.ok())
      return fail(res, s);
    DeviceMaterial m;
    if (const RegistryStatus s = registry->add(dev_id, m, broker); !s.ok()) return fail(res, s);
    answer(res, 201, material(m, apply_to_broker()));
  }

  void info(const std::string& dev_id, httplib::Response& res) {
    DeviceInfo d;
    if (const RegistryStatus s = registry->info(dev_id, d); !s.ok()) return fail(res, s);
    answer(res, 200, device_info_json(d));
  }

  void reveal(const std::string& dev_id, httplib::Response& res) {
    DeviceMaterial m;
    if (const RegistryStatus s = registry->material(dev_id, m); !s.ok()) return fail(res, s);
    answer(res, 200, material(m, nullptr));
  }

  void rotate(const std::string& dev_id, httplib::Response& res) {
    DeviceMaterial m;
    if (const RegistryStatus s = registry->rotate(dev_id, m); !s.ok()) return fail(res, s);
    answer(res, 200, material(m, apply_to_broker()));
  }

  void remove(const std::string& dev_id, httplib::Response& res) {
    if (const RegistryStatus s = registry->remove(dev_id); !s.ok()) return fail(res, s);
    ordered_json out = {{"dev_id", dev_id}, {"removed", true}};
    if (options.remove_state) {
      bool found = false;
      std::string error;
      if (options.remove_state(dev_id, found, error))
        out["state_removed"] = found;
      else
        out["state_error"] = error;
    }
    out["broker_update"] = apply_to_broker();
    answer(res, 200, out);
  }

  // Every handler (authorized before: pre_route): one at a time, on the file the registry is,
  // never throwing into httplib.
  template <typename F>
  httplib::Server::Handler guarded(F f) {
    return [this, f](const httplib::Request& req, httplib::Response& res) {
      const std::lock_guard lock(mutex);
      if (registry_replaced())
        return fail(res, 503, "registry_replaced",
                    options.registry_db +
                        " is not the file this server opened (deleted, moved or restored from a "
                        "copy): restart it");
      try {
        f(req, res);
      } catch (const std::exception& e) {
        fail(res, 500, "internal_error", e.what());
      }
    };
  }

  void routes() {
    server.Get("/v1/devices", guarded([this](const auto&, auto& res) { list(res); }));
    server.Post("/v1/devices", guarded([this](const auto& req, auto& res) { add(req, res); }));
    server.Get(kDevicePath,
               guarded([this](const auto& req, auto& res) { info(req.matches[1], res); }));
    server.Post(std::string(kDevicePath) + "/material",
                guarded([this](const auto& req, auto& res) { reveal(req.matches[1], res); }));
    server.Post(std::string(kDevicePath) + "/rotate",
                guarded([this](const auto& req, auto& res) { rotate(req.matches[1], res); }));
    server.Delete(kDevicePath,
                  guarded([this](const auto& req, auto& res) { remove(req.matches[1], res); }));
    server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      return pre_route(req, res);
    });
    server.set_error_handler([](const httplib::Request&, httplib::Response& res) {
      if (res.body.empty()) {
        const int status = res.status;
        fail(res, status, error_name(status),
             status == 413   ? "the body is larger than 16 KiB"
             : status == 404 ? "no such resource"
                             : "not a request this API takes (a POST needs a Content-Length, "
                               "also of 0)");
      }
    });
    server.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
      if (options.log)
        options.log(logging::printable(req.method) + " " + logging::printable(req.path) + " " +
                    std::to_string(res.status));
    });
  }
};

ControlServer::ControlServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ControlServer::~ControlServer() {
  stop();
}

std::unique_ptr<ControlServer> ControlServer::start(ControlServerOptions options,
                                                    std::string& error) {
  if (options.token.size() < kMinTokenLength) {
    error = "the token must be at least " + std::to_string(kMinTokenLength) + " characters";
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  if (const RegistryStatus s = parse_broker_address(options.default_broker, impl->default_broker);
      !s.ok()) {
    error = "default broker: " + s.message();
    return nullptr;
  }
  impl->token_digest = digest(options.token);
  OPENSSL_cleanse(options.token.data(), options.token.size());
  options.token.clear();
  if (const RegistryStatus s =
          DeviceRegistry::open(options.registry_db, OpenMode::existing_only, impl->registry);
      !s.ok()) {
    error = "registry " + options.registry_db + ": " + s.message();
    return nullptr;
  }
  if (::stat(options.registry_db.c_str(), &impl->registry_file) != 0) {
    error = "registry " + options.registry_db + ": " + std::strerror(errno);
    return nullptr;
  }
  impl->options = std::move(options);
  const std::string& path = impl->options.socket_path;
  if (path.empty() || path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    error = "the socket path must be 1-" + std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) +
            " characters";
    return nullptr;
  }
  if (struct stat st{}; ::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      error = path + " exists and is not a socket";
      return nullptr;
    }
    if (socket_in_use(path)) {
      error = path + " is in use by another server";
      return nullptr;
    }
    ::unlink(path.c_str());  // a stale socket of a server that did not stop cleanly
  }
  impl->server.set_address_family(AF_UNIX);
  impl->server.set_socket_options(socket_options);
  impl->server.set_payload_max_length(kMaxBody);
  impl->server.set_keep_alive_max_count(1);  // one request per connection
  impl->server.set_read_timeout(5, 0);
  impl->server.new_task_queue = [] { return new httplib::ThreadPool(4); };
  impl->routes();
  // 0660 from its creation, before a first connection could come: only the owner and the group
  // may connect (and only those who may enter its directory).
  const mode_t old_umask = ::umask(0117);
  const bool bound = impl->server.bind_to_port(path, 80);
  const int bind_errno = errno;
  ::umask(old_umask);
  if (!bound) {
    error = "cannot listen on " + path + ": " + std::strerror(bind_errno);
    return nullptr;
  }
  return std::unique_ptr<ControlServer>(new ControlServer(std::move(impl)));
}

void ControlServer::serve() {
  impl_->server.listen_after_bind();
}

void ControlServer::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->server.stop();
  ::unlink(impl_->options.socket_path.c_str());
}

}  // namespace dsekp::edge::control_api
