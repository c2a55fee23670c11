// File watching for the experiment (see file_watch.hpp).
#include "file_watch.hpp"

#include <algorithm>
#include <fstream>
#include <vector>

namespace dsekp::experiment {
namespace {

/// Reads from `offset` to the current end (at most 1 MiB per call, so a huge burst cannot stall
/// the wait loop), advancing `offset`.
std::string read_new(const std::string& path, std::uint64_t& offset) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const auto end = static_cast<std::uint64_t>(in.tellg());
  if (end <= offset) return "";
  const std::uint64_t n = std::min<std::uint64_t>(end - offset, 1u << 20);
  std::string data(n, '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(data.data(), static_cast<std::streamsize>(n));
  data.resize(static_cast<std::size_t>(in.gcount()));
  offset += data.size();
  return data;
}

}  // namespace

void FileFollower::pump(std::FILE* out) {
  for (;;) {
    const std::string data = read_new(path_, offset_);
    if (data.empty()) break;
    std::fwrite(data.data(), 1, data.size(), out);
    last_ = data.back();
  }
  std::fflush(out);
}

void FileFollower::finish(std::FILE* out) {
  pump(out);
  if (last_ != '\n') {
    std::fputc('\n', out);
    last_ = '\n';
  }
  std::fflush(out);
}

std::uint64_t CsvRowCounter::rows() {
  for (;;) {
    const std::string data = read_new(path_, offset_);
    if (data.empty()) break;
    for (const char c : data) lines_ += c == '\n' ? 1 : 0;
  }
  return lines_ > 0 ? lines_ - 1 : 0;
}

}  // namespace dsekp::experiment
