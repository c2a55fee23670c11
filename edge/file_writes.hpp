// Writing to a file descriptor whole, and naming the system error of a failed call: the edge's
// own files (the server CSV logs, their old journal's repair, the downlink journal).
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

namespace dsekp::edge {

/// Writes all of `data` at `fd`'s offset (the end, with O_APPEND), going on after a short write
/// or EINTR. False with errno set (EIO for a write that took nothing).
inline bool write_all(int fd, std::string_view data) noexcept {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

/// "`what`: <strerror(errno)>", for the error of the call that just failed.
inline std::string errno_text(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

}  // namespace dsekp::edge
