// The provisioning control API (`dsekp keys serve`): the `dsekp keys` device operations over
// HTTP, for a fleet tool.
//
//   GET    /v1/devices                   the devices, no secrets (as `keys list --json`)
//   POST   /v1/devices                   {"dev_id":"esp32-01","broker":"HOST:PORT"} -> 201, the
//                                        material (as `keys add`: DEV_SECRET in the body)
//   GET    /v1/devices/{dev_id}          one device, no secrets
//   POST   /v1/devices/{dev_id}/material its material again (as `keys show --reveal`)
//   POST   /v1/devices/{dev_id}/rotate   new secrets; the material
//   DELETE /v1/devices/{dev_id}          removed, with its stored session state
// Every answer is JSON. A change answers also what the broker did ("broker": {"update":
// "plugin"|"files", ...}; a failed plugin sync is reported there and the change stays in the
// registry, as with the CLI, so that the material of an add is never lost). Errors:
// {"error":"<stable name>","message":"..."} with 400 (bad_request, invalid_dev_id), 401
// (unauthorized), 404 (not_found), 409 (already_exists, name_conflict), 411 (a chunked body),
// 413, 415 (a compressed body), 503 (registry_replaced), 500.
//
// Security: the server listens on a Unix socket, mode 0660 from its creation, so that only the
// registry's owner and group can connect at all (the HTTP library holds up poorly to a hostile
// client: it reads slow requests without a deadline and huge header sets whole, so nobody else
// may be one); no TCP, so no TLS is needed (ssh can forward the socket). Every request also needs
// "Authorization: Bearer TOKEN", compared in constant time (the SHA-256 of both) before the body
// is read; a token anywhere else (a query string) is not looked at. A body must come with a
// Content-Length (at most 16 KiB), uncompressed. Secrets travel only in bodies, and the log line
// of a request names its method and path (escaped) and its status, never a body or a header.
// One registry change at a time (one registry connection; the plugin sync takes turns anyway);
// a registry file deleted or replaced under the server is refused, not written to.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace dsekp::edge::control_api {

struct ControlServerOptions {
  std::string socket_path;  // a stale socket there is replaced; a live one or another file refused
  std::string token;        // the bearer token, at least kMinTokenLength characters
  std::string registry_db;
  std::string default_broker = "localhost:1883";  // of a device added without "broker"
  // Removes a removed device's stored session state (the edge's store); true with `found`
  // set, or false with `error`.
  std::function<bool(const std::string& dev_id, bool& found, std::string& error)> remove_state;
  // One line per request (method, path, status) or failure; may be empty.
  std::function<void(const std::string& line)> log;
};

inline constexpr std::size_t kMinTokenLength = 32;

class ControlServer {
 public:
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  /// Opens the registry and binds; null with `error` if either fails.
  static std::unique_ptr<ControlServer> start(ControlServerOptions options, std::string& error);

  /// Serves until stop() (from another thread).
  void serve();
  /// Stops serving and removes the socket.
  void stop();

 private:
  struct Impl;
  explicit ControlServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace dsekp::edge::control_api
