// WipedOnExit: wipes a buffer that holds a secret or a decrypted payload however its scope is
// left, an exception included, for the containers that do not wipe themselves (std::string,
// std::vector, std::array). The buffer may grow or be reassigned meanwhile: what it holds when
// the scope ends is wiped.
#pragma once

#include <cstdint>

#include "dsekp/bytes.hpp"

namespace dsekp {

template <typename Buffer>
class WipedOnExit {
 public:
  explicit WipedOnExit(Buffer& buffer) noexcept : buffer_(buffer) {}
  WipedOnExit(const WipedOnExit&) = delete;
  WipedOnExit& operator=(const WipedOnExit&) = delete;
  ~WipedOnExit() {
    secure_wipe(MutableByteView(reinterpret_cast<std::uint8_t*>(buffer_.data()),
                                buffer_.size() * sizeof(*buffer_.data())));
  }

 private:
  Buffer& buffer_;
};

}  // namespace dsekp
