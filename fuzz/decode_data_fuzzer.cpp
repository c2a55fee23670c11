// libFuzzer target: the DATA (uplink) and DOWN (downlink) decoder, both encodings. Every input
// is decoded in both directions: JSON frames look the same in both, compact frames differ only
// in the type byte (0x03 uplink, 0x04 downlink), so at most one direction accepts a compact
// frame. Every accepted frame must round-trip (fuzz_support.hpp) and fit the size bound the
// encoders promise (max_encoded_data_size).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"

namespace {

using namespace dsekp;

bool decode_in(ByteView wire, Direction direction) {
  DataFrame frame;
  if (decode_data(wire, direction, frame) != Error::ok) return false;
  fuzz::check(frame.direction == direction, "decoded frame has another direction");
  fuzz::check(frame.ciphertext.size() <= kMaxPayloadSize, "ciphertext over the payload cap");
  fuzz::check(frame.has_iv == (detect_encoding(wire) == Encoding::json),
              "has_iv does not match the encoding");
  fuzz::check_round_trip(frame, wire, [direction](ByteView w, DataFrame& out) {
    return decode_data(w, direction, out);
  });
  const std::size_t bound = max_encoded_data_size(frame.ciphertext.size());
  for (const Encoding enc : {Encoding::json, Encoding::compact}) {
    const std::size_t n = fuzz::encode_or_fail(frame, enc).size();
    fuzz::check(n <= bound, "encoded size above max_encoded_data_size",
                std::to_string(n) + " > " + std::to_string(bound));
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteView wire(data, size);
  const bool up = decode_in(wire, Direction::uplink);
  const bool down = decode_in(wire, Direction::downlink);
  if (detect_encoding(wire) == Encoding::json) {
    fuzz::check(up == down, "a JSON frame decodes in one direction only");
  } else {
    fuzz::check(!(up && down), "a compact frame decodes in both directions");
  }
  return 0;
}
