// The bytes the built-in MQTT client has read and not yet handled: one buffer, allocated once
// and reused, that each read(2) appends to and the packet parser consumes from the front. Not a
// vector resized per read: that would zero-fill the whole read size every time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "dsekp/bytes.hpp"

namespace dsekp::edge::mqtt_builtin {

class ReceiveBuffer {
 public:
  /// The bytes read and not yet consumed.
  [[nodiscard]] ByteView pending() const noexcept {
    return {storage_.data() + begin_, end_ - begin_};
  }
  /// Drops the first `n` pending bytes (n <= pending().size()).
  void consume(std::size_t n) noexcept {
    begin_ += n;
    if (begin_ == end_) begin_ = end_ = 0;
  }
  /// Room for a read of at least `n` bytes after the pending ones: the pending bytes move to the
  /// front, and the storage grows only when they and `n` do not fit.
  [[nodiscard]] MutableByteView room(std::size_t n) {
    if (storage_.size() - end_ < n) {
      const std::size_t size = end_ - begin_;
      if (size > 0) std::memmove(storage_.data(), storage_.data() + begin_, size);
      begin_ = 0;
      end_ = size;
      if (storage_.size() - end_ < n) storage_.resize(end_ + n);
    }
    return {storage_.data() + end_, storage_.size() - end_};
  }
  /// Counts `n` bytes written into room() as pending.
  void produced(std::size_t n) noexcept { end_ += n; }
  void clear() noexcept { begin_ = end_ = 0; }

 private:
  std::vector<std::uint8_t> storage_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
};

}  // namespace dsekp::edge::mqtt_builtin
