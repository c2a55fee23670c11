// The results folder (see results_dir.hpp).
#include "results_dir.hpp"

#include <ctime>
#include <stdexcept>

namespace dsekp::experiment {
namespace fs = std::filesystem;
namespace {

std::string format_utc(std::chrono::system_clock::time_point when, const char* format) {
  const std::time_t t = std::chrono::system_clock::to_time_t(when);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

}  // namespace

std::string utc_stamp(std::chrono::system_clock::time_point when) {
  return format_utc(when, "%Y%m%dT%H%M%SZ");
}

std::string utc_iso(std::chrono::system_clock::time_point when) {
  return format_utc(when, "%Y-%m-%dT%H:%M:%SZ");
}

fs::path default_results_dir(const fs::path& base, std::chrono::system_clock::time_point when) {
  const fs::path first = base / "results" / utc_stamp(when);
  fs::path candidate = first;
  for (int i = 2; fs::exists(candidate) && i < 1000; ++i)
    candidate = fs::path(first.string() + "-" + std::to_string(i));
  return candidate;
}

void prepare_results_dir(const fs::path& dir) {
  std::error_code ec;
  const auto status = fs::status(dir, ec);
  if (fs::exists(status)) {
    if (!fs::is_directory(status))
      throw std::runtime_error("--out " + dir.string() + ": exists and is not a directory");
    if (!fs::is_empty(dir, ec))
      throw std::runtime_error("--out " + dir.string() +
                               ": not empty; refusing to overwrite an earlier run (give a new "
                               "folder, or remove this one)");
  }
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("--out " + dir.string() + ": cannot create: " + ec.message());
}

ResultsLayout::ResultsLayout(const fs::path& root_dir)
    : root(fs::absolute(root_dir)),
      logs_main(root / "logs" / "main"),
      logs_trial(root / "logs" / "trial"),
      analysis_main(root / "analysis" / "main"),
      analysis_trial(root / "analysis" / "trial"),
      devices(root / "devices"),
      processes(root / "processes"),
      broker(root / "broker"),
      secrets(root / "secrets") {}

void ResultsLayout::create() const {
  for (const auto& d : {logs_main, logs_trial, devices, processes, broker, secrets}) {
    std::error_code ec;
    fs::create_directories(d, ec);
    if (ec) throw std::runtime_error("cannot create " + d.string() + ": " + ec.message());
  }
  fs::permissions(secrets, fs::perms::owner_all);
}

}  // namespace dsekp::experiment
