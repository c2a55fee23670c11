// ServerCsvSink (see server_csv_sink.hpp).
#include "edge/sinks/server_csv_sink.hpp"

#include <stdexcept>

#include "edge/sinks/server_csv_format.hpp"

namespace dsekp::edge::sinks {

void ServerCsvSink::open_file(File& file, const std::string& path, FrameMode mode) {
  file.path = path;
  file.fp = std::fopen(path.c_str(), "ab");
  if (file.fp == nullptr) throw std::runtime_error("cannot open " + path + " for appending");
  // "ab" positions at the end: an empty file (new or truncated) gets the header.
  if (std::ftell(file.fp) == 0) {
    const std::string header = server_csv_header(mode);
    if (std::fwrite(header.data(), 1, header.size(), file.fp) != header.size() ||
        std::fflush(file.fp) != 0)
      throw std::runtime_error("cannot write the header of " + path);
  }
}

ServerCsvSink::ServerCsvSink(const std::string& logs_dir) {
  open_file(psk_, logs_dir + "/server_logs_psk.csv", FrameMode::psk);
  try {
    open_file(dsekp_, logs_dir + "/server_logs_dsekp.csv", FrameMode::dsekp);
  } catch (...) {
    std::fclose(psk_.fp);
    throw;
  }
}

ServerCsvSink::~ServerCsvSink() {
  if (psk_.fp != nullptr) std::fclose(psk_.fp);
  if (dsekp_.fp != nullptr) std::fclose(dsekp_.fp);
}

bool ServerCsvSink::write(const AcceptedFrame& row) {
  staged_.push_back(row);  // acted on only once the unit has committed
  return true;
}

void ServerCsvSink::committed() noexcept {
  for (const AcceptedFrame& row : staged_) {
    File& file = row.mode == FrameMode::psk ? psk_ : dsekp_;
    const std::uint64_t bin = row.recvts_ms / 1000;
    file.count = bin == file.bin ? file.count + 1 : 1;
    file.bin = bin;
    try {
      const std::string line = server_csv_row(row, file.count);
      if (std::fwrite(line.data(), 1, line.size(), file.fp) != line.size()) ++lost_rows_;
    } catch (...) {  // no memory for the line: the row is lost from the CSV only
      ++lost_rows_;
    }
  }
  // Flushed per unit, so a killed edge loses at most the rows of the unit in flight.
  if (!staged_.empty()) {
    std::fflush(psk_.fp);
    std::fflush(dsekp_.fp);
  }
  staged_.clear();
}

}  // namespace dsekp::edge::sinks
