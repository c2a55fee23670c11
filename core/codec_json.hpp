// The JSON profile: the paper's on-wire JSON frames (internal; public API in dsekp/codec.hpp).
//
// Encoders write members in the order below, without whitespace; integers in canonical decimal,
// byte fields in padded base64:
//   INIT {"v":1,"dev_id":"..","sessctr":N,"t":N,"dev_nonce":"b64(12)","proof":"b64(16)"}
//   ACK  {"v":1,"dev_id":"..","sessctr":N,"edge_nonce":"b64(12)","status":N,"proof":"b64(16)"}
//   DATA/DOWN {"seq":N,"dev_id":"..","sessctr_id":N,"ciphertext":"b64","iv":"b64(12)",
//              "tag":"b64(16)","sendts_ms":N}
//   PSK  {"seq":N,"dev_id":"..","ciphertext":"b64","iv":"b64(12)","tag":"b64(16)","sendts_ms":N}
//   REKEY {"v":1,"dev_id":"..","sessctr":N,"seq":N,"proof":"b64(16)"}
// Decoders accept members in any order and JSON whitespace between tokens, nothing else that
// deviates. Callers (codec.cpp) have already rejected empty and oversized input and checked that
// the input starts with '{'; they also validate frame values before encoding.
#pragma once

#include <cstddef>

#include "dsekp/bytes.hpp"
#include "dsekp/error.hpp"
#include "dsekp/frames.hpp"

namespace dsekp::codec_detail::json {

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

/// Largest JSON DATA/DOWN frame with `payload_size` bytes of ciphertext: widest integers and a
/// 64-byte dev_id. PSK frames have the same members minus sessctr_id, so they fit too.
[[nodiscard]] std::size_t max_data_frame_size(std::size_t payload_size) noexcept;

}  // namespace dsekp::codec_detail::json
