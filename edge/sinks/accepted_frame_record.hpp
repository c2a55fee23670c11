// One accepted frame's row (AcceptedFrame) as a compact, versioned byte string, for the
// write-ahead of the sink rows in Redis (docs/SCALING.md "Running several edges"): the commit
// script stores the rows of a unit in the edge's pending list, and a restarted edge decodes them
// to re-insert the ones its local sinks lack.
//
// Encoding: MessagePack (nlohmann-json's to_msgpack) of one array,
//   [1, mode, encoding, dev_id, sessctr, seq, sendts_ms, recvts_ms, recvts_us, latency_ms,
//    ciphertext_b64, iv_b64, tag_b64, plaintext, payload_size]
// with mode "dsekp"/"psk", encoding "json"/"compact", the plaintext as a MessagePack binary
// (readings need not be text) and every other field as in AcceptedFrame. The leading 1 is the
// format version: a decoder refuses any other, so a later format is never misread. About 60
// bytes plus the reading and the base64 fields.
#pragma once

#include <string>
#include <string_view>

#include "edge/service/accepted_frame.hpp"

namespace dsekp::edge::sinks {

/// The record of `row` (format 1).
[[nodiscard]] std::string encode_accepted_frame(const AcceptedFrame& row);

/// Decodes a record into `row`. false, with `error` saying why, for anything that is not a
/// well-formed format-1 record (wrong version, types, ranges, trailing bytes).
[[nodiscard]] bool decode_accepted_frame(std::string_view record, AcceptedFrame& row,
                                         std::string& error);

}  // namespace dsekp::edge::sinks
