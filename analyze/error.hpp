// The one exception type of `dsekp analyze`: a problem with the inputs that stops the analysis
// (unreadable or empty file, missing column, unterminated quote). Bad rows are not errors: they
// are counted and listed (log_files.hpp).
#pragma once

#include <stdexcept>
#include <string>

namespace dsekp::analyze {

class AnalyzeError : public std::runtime_error {
 public:
  explicit AnalyzeError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace dsekp::analyze
