// Number formatting shared by the report and the console summary (GCC 12 has no <format>).
// Missing values print as an en dash, as in the paper's tables.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace dsekp::analyze {

inline constexpr const char* kMissing = "–";

std::string fixed(double value, int decimals);  // 1234.5 -> "1,234.5"
std::string fixed(const std::optional<double>& value, int decimals);
std::string count(std::uint64_t value);               // 6500 -> "6,500"
std::string p_value(const std::optional<double>& p);  // 9.35e-164, 0.0312, "< 1e-300"
std::string signed_fixed(const std::optional<double>& value, int decimals);  // "−0.486", "+3.1"

}  // namespace dsekp::analyze
