// Running a short command to its end (see run_to_end.hpp).
#include "engines/run_to_end.hpp"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "experiment/commands.hpp"
#include "experiment/process.hpp"

namespace dsekp::engines {

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

RunOutput run_to_end(const std::vector<std::string>& argv, const std::string& scratch_dir,
                     std::chrono::milliseconds timeout) {
  static std::atomic<unsigned> counter{0};
  // Unique per process and call: test programs running at once may share the scratch folder.
  const std::string output =
      scratch_dir + "/run-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".out";
  std::filesystem::remove(output);
  experiment::Child child(experiment::ChildSpec{argv.front(), argv, output, {}});
  const auto status = child.wait_for(timeout);
  if (!status) {
    (void)child.stop(std::chrono::milliseconds(500));
    const std::string text = file_text(output);
    std::filesystem::remove(output);
    throw std::runtime_error(experiment::shell_join(argv) + " did not end within " +
                             std::to_string(timeout.count()) + " ms; its output:\n" + text);
  }
  RunOutput r{status->shell_code(), file_text(output)};
  std::filesystem::remove(output);
  return r;
}

}  // namespace dsekp::engines
