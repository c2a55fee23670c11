// Wire encodings of every frame: the paper's JSON profile and the compact binary profile.
//
// Decoders are strict: exact JSON types, canonical integers and base64, exact field lengths and
// ranges, no unknown/duplicate/missing members, no trailing bytes, inputs capped at
// kMaxFrameSize. Each malformation returns its own Error (see error.hpp). Decoders pick the
// encoding from the first byte ('{' = JSON, else the compact type byte of the expected frame).
// docs/PROTOCOL.md gives the byte layouts. No heap, no exceptions: used on the device path.
#pragma once

#include <cstddef>

#include "dsekp/bytes.hpp"
#include "dsekp/error.hpp"
#include "dsekp/frames.hpp"

namespace dsekp {

enum class Encoding : std::uint8_t { json, compact };

/// The encoding a received frame claims by its first byte. Empty input reads as compact (and
/// then fails to decode with frame_empty).
[[nodiscard]] Encoding detect_encoding(ByteView wire) noexcept;

/// Encoders write into `out` and set `written`; buffer_too_small if `out` is too short.
Error encode(const InitFrame& f, Encoding enc, MutableByteView out, std::size_t& written) noexcept;
Error encode(const AckFrame& f, Encoding enc, MutableByteView out, std::size_t& written) noexcept;
Error encode(const DataFrame& f, Encoding enc, MutableByteView out, std::size_t& written) noexcept;
/// As above. `f.ciphertext` may be the last f.ciphertext.size() bytes of `out` itself, when `out`
/// holds max_encoded_data_size(f.ciphertext.size()) bytes: the encoder reads each ciphertext byte
/// before anything is written over it (the device SDK seals into the tail of the frame buffer, so
/// that sealing needs no second buffer). Any other overlap is invalid_argument.
Error encode(const DataFrameView& f, Encoding enc, MutableByteView out,
             std::size_t& written) noexcept;
Error encode(const PskFrame& f, Encoding enc, MutableByteView out, std::size_t& written) noexcept;
Error encode(const RekeyFrame& f, Encoding enc, MutableByteView out, std::size_t& written) noexcept;

/// Decoders. On error the output struct is left in an unspecified but valid state.
Error decode_init(ByteView wire, InitFrame& out) noexcept;
Error decode_ack(ByteView wire, AckFrame& out) noexcept;
/// `direction` selects the compact type byte expected (data or down) and is stored in `out`.
Error decode_data(ByteView wire, Direction direction, DataFrame& out) noexcept;
/// As above, with the ciphertext copied (compact) or base64-decoded (JSON) into `ciphertext`,
/// which must not overlap `wire`; out.ciphertext views the bytes written there. buffer_too_small
/// if the frame's ciphertext (at most kMaxPayloadSize) does not fit.
Error decode_data(ByteView wire, Direction direction, DataFrameView& out,
                  MutableByteView ciphertext) noexcept;
Error decode_psk(ByteView wire, PskFrame& out) noexcept;
Error decode_rekey(ByteView wire, RekeyFrame& out) noexcept;

/// Upper bound of the encoded size of a DATA frame with `payload_size` bytes of ciphertext.
[[nodiscard]] std::size_t max_encoded_data_size(std::size_t payload_size) noexcept;

}  // namespace dsekp
