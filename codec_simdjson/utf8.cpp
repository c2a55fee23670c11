// is_valid_utf8 (see utf8.hpp).
#include "codec_simdjson/utf8.hpp"

#include <simdjson.h>

namespace dsekp {

bool is_valid_utf8(std::string_view text) noexcept {
  return simdjson::validate_utf8(text.data(), text.size());
}

}  // namespace dsekp
