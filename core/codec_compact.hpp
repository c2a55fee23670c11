// The compact binary profile (internal; the public API is dsekp/codec.hpp).
//
// Layouts (integers big-endian, `len` one byte 1..64 followed by the dev_id bytes):
//   INIT 0x01 | len | dev_id | sessctr(2) | t(4) | dev_nonce(12) | proof(16)
//   ACK  0x02 | len | dev_id | sessctr(2) | edge_nonce(12) | status(1) | proof(16)
//   DATA 0x03 | len | dev_id | sessctr(2) | seq(4) | sendts_ms(8) | ciphertext(n) | tag(16)
//   DOWN 0x04 | same layout as DATA
//   PSK  0x05 | len | dev_id | seq(4) | sendts_ms(8) | iv(12) | ciphertext(n) | tag(16)
//   REKEY 0x06 | len | dev_id | sessctr(2) | seq(4) | proof(16)
// DATA/DOWN do not carry the AEAD nonce: both ends derive it from the session IV base and seq.
// Callers (codec.cpp) have already rejected empty and oversized input and validated the frame
// values for encoding; these functions only deal with the byte layout.
#pragma once

#include <cstddef>

#include "dsekp/bytes.hpp"
#include "dsekp/error.hpp"
#include "dsekp/frames.hpp"

namespace dsekp::codec_detail::compact {

Error encode(const InitFrame& f, MutableByteView out, std::size_t& written) noexcept;
Error encode(const AckFrame& f, MutableByteView out, std::size_t& written) noexcept;
Error encode(const DataFrameView& f, MutableByteView out, std::size_t& written) noexcept;
Error encode(const PskFrame& f, MutableByteView out, std::size_t& written) noexcept;
Error encode(const RekeyFrame& f, MutableByteView out, std::size_t& written) noexcept;

Error decode_init(ByteView wire, InitFrame& out) noexcept;
Error decode_ack(ByteView wire, AckFrame& out) noexcept;
Error decode_data(ByteView wire, Direction direction, DataFrameView& out,
                  MutableByteView ciphertext) noexcept;
Error decode_psk(ByteView wire, PskFrame& out) noexcept;
Error decode_rekey(ByteView wire, RekeyFrame& out) noexcept;

/// Size of the compact DATA/DOWN frame for a dev_id of `dev_id_size` bytes and `payload_size`
/// bytes of ciphertext.
[[nodiscard]] constexpr std::size_t data_frame_size(std::size_t dev_id_size,
                                                    std::size_t payload_size) noexcept {
  return 1 + 1 + dev_id_size + 2 + 4 + 8 + payload_size + kTagSize;
}

}  // namespace dsekp::codec_detail::compact
