// A benchmark's own folder under the system's temporary directory, removed with everything in it
// when the benchmark ends (unless kept for inspection).
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace dsekp::bench {

class WorkDir {
 public:
  /// A new folder named `prefix` and six random characters; `keep`: left in place at the end.
  explicit WorkDir(const std::string& prefix, bool keep = false) : keep_(keep) {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("cannot create a work directory");
    path_ = pattern;
  }
  ~WorkDir() {
    std::error_code ignored;
    if (!keep_) std::filesystem::remove_all(path_, ignored);
  }
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;

  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
  bool keep_;
};

}  // namespace dsekp::bench
