// Value ranges shared by the JSON and compact codecs (internal).
//
// Both encodings must carry exactly the same set of values, so that a frame can be re-encoded in
// the other profile without loss; the ranges therefore live here, not in either codec.
#pragma once

#include <cstdint>

namespace dsekp::codec_detail {

/// sendts_ms range: the largest integer a JSON number holds exactly in an IEEE double (2^53 - 1),
/// so JavaScript/Python-float consumers of the JSON profile read the same value we wrote.
inline constexpr std::uint64_t kMaxSendTs = (std::uint64_t{1} << 53U) - 1U;

}  // namespace dsekp::codec_detail
