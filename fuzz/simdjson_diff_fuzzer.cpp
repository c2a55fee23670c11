// libFuzzer target: the edge's fast JSON decoder (codec_simdjson/) against the portable decoder,
// its contract (simd_codec.hpp): for every input, DATA in both directions and PSK, the same
// verdict, the same error name when both reject, the same values when both accept, and every
// frame the portable decoder accepts must have been accepted by the fast path (not the
// fallback). Any difference aborts. One decoder instance serves every input, as on the edge,
// with its output structs reused, so values left over from an earlier input would show up.
#include <cstddef>
#include <cstdint>
#include <string>

#include "codec_simdjson/simd_codec.hpp"
#include "fuzz_support.hpp"

namespace {

using namespace dsekp;

SimdJsonDecoder& decoder() {
  static SimdJsonDecoder instance;
  return instance;
}

void compare(const char* what, ByteView wire, Error portable, Error simd, bool values_equal,
             bool took_fast_path) {
  if (portable != simd) {
    fuzz::fail(what, std::string("portable=") + error_name(portable) +
                         " simdjson=" + error_name(simd) + " input=" + fuzz::printable(wire));
  }
  if (portable != Error::ok) return;
  fuzz::check(values_equal, "simdjson decoded other values", fuzz::printable(wire));
  if (detect_encoding(wire) == Encoding::json) {
    fuzz::check(took_fast_path, "a valid JSON frame missed the fast path", fuzz::printable(wire));
  }
}

void data_in(ByteView wire, Direction direction) {
  static DataFrame fast;  // reused on purpose (see above)
  DataFrame reference;
  const Error portable = decode_data(wire, direction, reference);
  const std::uint64_t before = decoder().stats().fast_accepts;
  const Error simd = decoder().decode_data(wire, direction, fast);
  compare(direction == Direction::uplink ? "DATA verdicts differ" : "DOWN verdicts differ", wire,
          portable, simd, portable != Error::ok || fuzz::same(reference, fast),
          decoder().stats().fast_accepts != before);
}

void psk(ByteView wire) {
  static PskFrame fast;
  PskFrame reference;
  const Error portable = decode_psk(wire, reference);
  const std::uint64_t before = decoder().stats().fast_accepts;
  const Error simd = decoder().decode_psk(wire, fast);
  compare("PSK verdicts differ", wire, portable, simd,
          portable != Error::ok || fuzz::same(reference, fast),
          decoder().stats().fast_accepts != before);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteView wire(data, size);
  data_in(wire, Direction::uplink);
  data_in(wire, Direction::downlink);
  psk(wire);
  return 0;
}
