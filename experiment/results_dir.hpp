// The experiment's results folder: chosen (--out, or results/<UTC timestamp>/), refused when it
// already holds anything (a rerun must not mix its logs into an earlier run's, which analyze would
// then count twice), and laid out as docs/EXPERIMENT.md describes.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

namespace dsekp::experiment {

/// "20251130T120000Z" for the given instant (UTC).
std::string utc_stamp(std::chrono::system_clock::time_point when);
/// "2025-11-30T12:00:00Z".
std::string utc_iso(std::chrono::system_clock::time_point when);

/// The default folder: `base`/results/<stamp>, with "-2", "-3", ... appended if that exists.
std::filesystem::path default_results_dir(const std::filesystem::path& base,
                                          std::chrono::system_clock::time_point when);

/// Creates `dir` (and its parents). Throws std::runtime_error if it exists and is not an empty
/// directory, saying so and that nothing was changed.
void prepare_results_dir(const std::filesystem::path& dir);

/// The folders of one experiment (all absolute).
struct ResultsLayout {
  std::filesystem::path root;
  std::filesystem::path logs_main, logs_trial;          // the CSV logs (analyze's input)
  std::filesystem::path analysis_main, analysis_trial;  // dsekp analyze's output
  std::filesystem::path devices;                        // device summaries
  std::filesystem::path processes;  // stdout/stderr of every child, broker log, ready files
  std::filesystem::path broker;     // mosquitto.conf
  std::filesystem::path secrets;    // registry, state, credentials, broker password file (0700)

  explicit ResultsLayout(const std::filesystem::path& root_dir);
  /// Creates the folders (secrets 0700).
  void create() const;
};

}  // namespace dsekp::experiment
