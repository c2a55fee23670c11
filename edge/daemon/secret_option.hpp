// A password given by file (--password-file, --store-password-file), kept out of argv.
#pragma once

#include <stdexcept>
#include <string>

#include "edge/registry/secure_file.hpp"

namespace dsekp::edge::daemon {

/// The first line of `path`; throws std::runtime_error naming `option` if it cannot be read.
[[nodiscard]] inline std::string read_secret_option(const std::string& path, const char* option) {
  std::string line;
  if (const RegistryStatus s = read_password_file(path, line); !s.ok())
    throw std::runtime_error(std::string(option) + " " + s.message());
  return line;
}

}  // namespace dsekp::edge::daemon
