// GET /metrics on loopback and one sample from it (see metrics_scrape.hpp).
#include "metrics_scrape.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

namespace dsekp::bench {

std::optional<std::string> scrape_metrics(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return std::nullopt;
  // Bounded: an edge that hangs must not hang the bench.
  const timeval timeout{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  bool ok = false;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string request = "GET /metrics HTTP/1.0\r\n\r\n";
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
        static_cast<ssize_t>(request.size())) {
      char buf[4096];
      ssize_t n = 0;
      while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0)
        answer.append(buf, static_cast<std::size_t>(n));
      ok = n == 0;  // the server closed after the answer (HTTP/1.0)
    }
  }
  ::close(fd);
  if (!ok || answer.rfind("HTTP/1.", 0) != 0) return std::nullopt;
  return answer;
}

std::optional<double> metric_value(const std::string& text, const std::string& name) {
  const std::string key = "\n" + name + " ";
  const auto at = text.find(key);
  if (at == std::string::npos) return std::nullopt;
  const char* start = text.c_str() + at + key.size();
  char* end = nullptr;
  const double v = std::strtod(start, &end);
  if (end == start) return std::nullopt;
  return v;
}

}  // namespace dsekp::bench
