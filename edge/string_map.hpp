// A hash map keyed by std::string that is searched with a std::string_view, without building a
// temporary string per lookup: the edge's per-device tables (keyed by dev_id).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace dsekp::edge {

struct TransparentStringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>{}(s);
  }
};

template <typename Value>
using StringMap = std::unordered_map<std::string, Value, TransparentStringHash, std::equal_to<>>;

}  // namespace dsekp::edge
