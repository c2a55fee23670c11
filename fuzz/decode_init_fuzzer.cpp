// libFuzzer target: the INIT decoder (both encodings; the first byte picks one), and the
// encode(decode(x)) round trip of every INIT it accepts (fuzz_support.hpp).
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dsekp;
  const ByteView wire(data, size);
  InitFrame frame;
  if (decode_init(wire, frame) != Error::ok) return 0;
  fuzz::check_round_trip(frame, wire,
                         [](ByteView w, InitFrame& out) { return decode_init(w, out); });
  return 0;
}
