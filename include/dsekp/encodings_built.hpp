// Which wire encodings this build of the library encodes and decodes. Both, unless every file of
// the build is compiled with DSEKP_CODEC_NO_JSON or DSEKP_CODEC_NO_COMPACT: a firmware that
// speaks one encoding can leave the other's code out of its flash (docs/FIRMWARE.md gives the
// sizes). That loses nothing on the wire: an edge answers a device only in the device's own
// encoding (docs/PROTOCOL.md section 2), so a frame in the left-out one is never a conforming
// reply; the decoders refuse it as unknown_frame_type and the encoders as invalid_argument.
#pragma once

#include "dsekp/codec.hpp"

#if defined(DSEKP_CODEC_NO_JSON) && defined(DSEKP_CODEC_NO_COMPACT)
#error "DSEKP_CODEC_NO_JSON and DSEKP_CODEC_NO_COMPACT together leave no wire encoding"
#endif

namespace dsekp {

#ifdef DSEKP_CODEC_NO_JSON
inline constexpr bool kJsonEncodingBuilt = false;
#else
inline constexpr bool kJsonEncodingBuilt = true;
#endif
#ifdef DSEKP_CODEC_NO_COMPACT
inline constexpr bool kCompactEncodingBuilt = false;
#else
inline constexpr bool kCompactEncodingBuilt = true;
#endif

[[nodiscard]] constexpr bool encoding_built(Encoding enc) noexcept {
  return enc == Encoding::json ? kJsonEncodingBuilt : kCompactEncodingBuilt;
}

}  // namespace dsekp
