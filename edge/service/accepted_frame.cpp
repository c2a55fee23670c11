// Builds the log row of an accepted frame (see accepted_frame.hpp).
#include "accepted_frame.hpp"

#include <string_view>

#include "edge/registry/text_encoding.hpp"

namespace dsekp::edge {
namespace {

// Fields both modes share. sendts_ms is at most 2^53 - 1 (the codecs' range) and a Unix
// millisecond clock stays below 2^63 for millions of years, so the signed difference is exact.
AcceptedFrame common(Mode mode, std::string_view dev_id, std::uint32_t seq, std::uint64_t sendts_ms,
                     ByteView plaintext, ByteView payload, std::uint64_t recvts_us) {
  const std::uint64_t recvts_ms = recvts_us / 1000;
  AcceptedFrame row;
  row.mode = mode;
  row.encoding = detect_encoding(payload);
  row.dev_id = std::string(dev_id);
  row.seq = seq;
  row.sendts_ms = sendts_ms;
  row.recvts_ms = recvts_ms;
  row.recvts_us = recvts_us;
  row.latency_ms = static_cast<std::int64_t>(recvts_ms) - static_cast<std::int64_t>(sendts_ms);
  row.plaintext.assign(plaintext.begin(), plaintext.end());
  row.payload_size = payload.size();
  return row;
}

}  // namespace

AcceptedFrame make_accepted_frame(const DataFrame& frame, const AeadNonce& nonce,
                                  ByteView plaintext, ByteView payload, std::uint64_t recvts_us) {
  AcceptedFrame row = common(Mode::dsekp, frame.dev_id.str(), frame.seq, frame.sendts_ms, plaintext,
                             payload, recvts_us);
  row.sessctr = frame.sessctr;
  row.ciphertext_b64 = to_base64(frame.ciphertext.view());
  row.iv_b64 = to_base64(nonce.view());
  row.tag_b64 = to_base64(frame.tag.view());
  return row;
}

AcceptedFrame make_accepted_frame(const PskFrame& frame, ByteView plaintext, ByteView payload,
                                  std::uint64_t recvts_us) {
  AcceptedFrame row = common(Mode::psk, frame.dev_id.str(), frame.seq, frame.sendts_ms, plaintext,
                             payload, recvts_us);
  row.ciphertext_b64 = to_base64(frame.ciphertext.view());
  row.iv_b64 = to_base64(frame.iv.view());
  row.tag_b64 = to_base64(frame.tag.view());
  return row;
}

}  // namespace dsekp::edge
