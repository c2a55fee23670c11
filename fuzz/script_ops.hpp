// The op codes of the scripted fuzz targets (device_session_fuzzer.cpp, edge_service_fuzzer.cpp)
// and the byte-level mutation they share. make_corpus.cpp writes seed scripts with the same
// codes, so a seed means what it says: "INIT from device 0, deliver its ACK, DATA, replay it".
// Each op is one byte (taken modulo the op count); its operands follow (see each target).
#pragma once

#include <cstdint>

#include "fuzz_support.hpp"

namespace dsekp::fuzz {

enum class DeviceOp : std::uint8_t {
  raw_ack,       // bytes16: arbitrary ACK bytes to the device
  raw_down,      // bytes16: arbitrary downlink bytes to the device
  edge_answers,  // enc, mutation: the edge answers the outstanding INIT; the ACK goes to the device
  replay_ack,    // index, enc, mutation: an earlier genuine ACK again
  seal,          // enc: the device seals a reading, the edge opens it
  new_handshake,  // the device starts a new handshake
  downlink,       // enc, mutation: the edge seals a downlink frame, the device opens it
  replay_down,    // index, enc, mutation: an earlier genuine downlink frame again
  clock,          // u16: time passes (retransmission and expiry are checked)
  tamper_ack,     // index, field, value: a genuine ACK with one field changed
  tamper_down,    // index, field, u32 value, enc: a genuine downlink frame with one field changed
  rekey,          // mode, u16 sessctr, u16 back, enc, mutation: a REKEY request (genuine, for
                  // another session, or with a forged proof) to the device
};
inline constexpr std::uint8_t kDeviceOpCount = 12;

enum class EdgeOp : std::uint8_t {
  raw,         // topic selector, bytes16 payload: an arbitrary message
  init,        // device, enc: a new handshake's INIT (enc bit 0: compact; bit 1: hold it back,
               // into the history only, for a replay op to deliver late)
  init_again,  // device, enc: the outstanding INIT again (retransmission)
  take_ack,    // device: the device takes the newest ACK the edge published for it
  data,        // device, enc: the device seals a reading (a unique plaintext); enc as for init
  psk,         // device, enc: a PSK baseline frame
  replay,      // index: an earlier message again, byte for byte
  mutate,      // index, mutation: an earlier message with one byte-level change
  tamper,      // index, field, u32 value: an earlier frame with one field changed, re-encoded
  clock,       // u16: time passes (or steps back)
  restart,     // the edge restarts over the same store
  downlink,    // device: the edge sends a downlink frame, the device opens it
  reboot,      // device: the device reboots (a new DeviceSession, state lost)
};
inline constexpr std::uint8_t kEdgeOpCount = 13;

/// Applies one byte-level change chosen by the input to `wire` (none, bit flip, byte overwrite,
/// truncation, insertion, deletion). Returns whether `wire` changed.
inline bool mutate(Bytes& wire, ByteReader& in) {
  const std::uint8_t kind = in.u8();
  const std::uint16_t where = in.u16();
  const std::uint8_t value = in.u8();
  if (wire.empty() || kind % 6 == 0) return false;
  const std::size_t at = where % wire.size();
  const Bytes before = wire;
  switch (kind % 6) {
    case 1:
      wire[at] ^= static_cast<std::uint8_t>(1u << (value % 8));
      break;
    case 2:
      wire[at] = value;
      break;
    case 3:
      wire.resize(at);
      break;
    case 4:
      wire.insert(wire.begin() + static_cast<std::ptrdiff_t>(at), value);
      break;
    default:
      wire.erase(wire.begin() + static_cast<std::ptrdiff_t>(at));
      break;
  }
  return wire != before;
}

}  // namespace dsekp::fuzz
