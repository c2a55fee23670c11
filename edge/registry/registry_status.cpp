// Names of the registry's error codes (see registry_status.hpp).
#include "registry_status.hpp"

namespace dsekp::edge {

const char* registry_errc_name(RegistryErrc code) noexcept {
  switch (code) {
    case RegistryErrc::ok:
      return "ok";
    case RegistryErrc::invalid_dev_id:
      return "invalid_dev_id";
    case RegistryErrc::invalid_name:
      return "invalid_name";
    case RegistryErrc::already_exists:
      return "already_exists";
    case RegistryErrc::not_found:
      return "not_found";
    case RegistryErrc::name_conflict:
      return "name_conflict";
    case RegistryErrc::insecure_file:
      return "insecure_file";
    case RegistryErrc::not_a_registry:
      return "not_a_registry";
    case RegistryErrc::io:
      return "io";
    case RegistryErrc::database:
      return "database";
    case RegistryErrc::corrupt:
      return "corrupt";
    case RegistryErrc::invalid_argument:
      return "invalid_argument";
    case RegistryErrc::crypto_failure:
      return "crypto_failure";
    case RegistryErrc::broker:
      return "broker";
    case RegistryErrc::secret_erased:
      return "secret_erased";
  }
  return "unknown";
}

}  // namespace dsekp::edge
