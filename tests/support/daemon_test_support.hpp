// Helpers shared by the daemon tests: bounded waits, a minimal RFC 4180 line parser for the
// server logs, SQLite counts, a /metrics scrape over loopback, and the readings the tests send.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/child_process.hpp"
#include "tests/support/scripted_device.hpp"

namespace dsekp::edge::testing {

using Clock = std::chrono::steady_clock;
using Row = std::vector<std::string>;

inline std::uint64_t unix_ms_now() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

inline bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

/// RFC 4180 lines (no line breaks inside fields, which our rows never have).
inline std::vector<Row> parse_csv(const std::string& text) {
  std::vector<Row> rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    Row row(1);
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        row.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        row.emplace_back();
      } else {
        row.back() += c;
      }
    }
    rows.push_back(row);
  }
  return rows;
}

/// How many times `needle` occurs in `text` (e.g. a marker in an edge's log).
inline std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

inline std::size_t line_count(const std::string& path) {
  const std::string text = dsekp::test::read_file(path);
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

inline std::int64_t count_rows(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::int64_t n = -1;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW)
      n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
  return n;
}

/// The DSEKP readings in an edge's telemetry table, in insertion order (empty on error).
inline std::vector<std::string> telemetry_readings(const std::string& db_path) {
  std::vector<std::string> out;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT plaintext FROM telemetry WHERE mode = 'dsekp' ORDER BY id",
                           -1, &s, nullptr) == SQLITE_OK)
      while (sqlite3_step(s) == SQLITE_ROW)
        out.emplace_back(static_cast<const char*>(sqlite3_column_blob(s, 0)),
                         static_cast<std::size_t>(sqlite3_column_bytes(s, 0)));
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
  return out;
}

/// The value of the Prometheus sample line `series` (labels exactly as printed, e.g.
/// `dsekp_rejections_total{reason="replay"}`) in a /metrics answer, or -1 if absent.
inline double metric_value(const std::string& text, const std::string& series) {
  const std::string key = "\n" + series + " ";
  const auto at = text.find(key);
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + key.size()));
}

/// GET `path` from the edge's HTTP endpoint on loopback `port` (HTTP/1.0: the server closes the
/// connection after the answer); the whole answer, status line included, "" on any failure.
/// Receives time out after 5 s.
inline std::string http_get(int port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (::send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size())) {
      char buf[4096];
      for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
        answer.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return answer;
}

/// GET /metrics (see http_get).
inline std::string scrape_metrics(int port) {
  return http_get(port, "/metrics");
}

/// The metrics port the edge printed on stderr ("metrics on http://127.0.0.1:PORT/metrics").
inline int metrics_port(const std::string& edge_stderr) {
  const std::string marker = "metrics on http://127.0.0.1:";
  const auto at = edge_stderr.find(marker);
  return at == std::string::npos ? -1 : std::stoi(edge_stderr.substr(at + marker.size()));
}

inline std::string as_string(const Bytes& b) {
  return std::string(b.begin(), b.end());
}

inline std::string reading(int i) {
  return R"({"t":)" + std::to_string(20 + i) + R"(.5,"h":51.0})";
}

}  // namespace dsekp::edge::testing
