// Which files to analyse: log directories holding the standard file names (docs/LOGS.md), and/or
// files named one by one. Each server log is one run; its client log, if any, is the one from the
// same directory, or the explicit client file at the same position.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <vector>

namespace dsekp::analyze {

struct RunFiles {
  std::filesystem::path server;
  std::optional<std::filesystem::path> client;  // without it the run has no reliability figures
};

struct AnalysisInputs {
  std::vector<RunFiles> psk;
  std::vector<RunFiles> dsekp;
  std::vector<std::filesystem::path> handshakes;
};

struct ExplicitFiles {
  std::vector<std::filesystem::path> psk_server;
  std::vector<std::filesystem::path> psk_client;
  std::vector<std::filesystem::path> dsekp_server;
  std::vector<std::filesystem::path> dsekp_client;
  std::vector<std::filesystem::path> handshakes;
};

/// Runs from each directory (in order), then the explicit files. Throws AnalyzeError when a
/// directory has none of the standard files, a client log has no server log, the client and
/// server files of a mode cannot be paired (their counts differ), or nothing was given.
AnalysisInputs collect_inputs(std::span<const std::filesystem::path> log_dirs,
                              const ExplicitFiles& files);

}  // namespace dsekp::analyze
