// libFuzzer target: the PSK baseline frame decoder (both encodings; the first byte picks one),
// and the encode(decode(x)) round trip of every frame it accepts (fuzz_support.hpp).
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dsekp;
  const ByteView wire(data, size);
  PskFrame frame;
  if (decode_psk(wire, frame) != Error::ok) return 0;
  fuzz::check(frame.ciphertext.size() <= kMaxPayloadSize, "ciphertext over the payload cap");
  fuzz::check_round_trip(frame, wire, [](ByteView w, PskFrame& out) { return decode_psk(w, out); });
  return 0;
}
