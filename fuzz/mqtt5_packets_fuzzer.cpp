// libFuzzer target: the built-in MQTT client's packet codec (edge/mqtt_builtin/mqtt5_packets.hpp)
// on a byte stream as a broker would send it: packets framed one after the other under an 8 KiB
// limit, each decoded by its type; every PUBLISH it accepts is encoded again and must decode to
// the same fields.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "edge/mqtt_builtin/mqtt5_packets.hpp"
#include "fuzz_support.hpp"

namespace {

using namespace dsekp::edge::mqtt_builtin;

void check_publish_round_trip(const RawPacket& packet) {
  Publish p;
  if (*decode_publish(packet, p) != '\0') return;
  std::vector<std::uint8_t> again;
  append_publish(again, p.topic, p.payload, p.qos, p.retain, p.dup, p.packet_id,
                 p.correlation_data);
  dsekp::fuzz::check(again.size() == publish_size(p.topic, p.payload, p.qos, p.correlation_data),
                     "publish_size differs from what append_publish wrote");
  RawPacket framed;
  std::size_t consumed = 0;
  dsekp::fuzz::check(
      next_packet(again, 0, framed, consumed) == Framing::packet && consumed == again.size(),
      "an encoded PUBLISH does not frame as one packet");
  Publish q;
  dsekp::fuzz::check(*decode_publish(framed, q) == '\0', "an encoded PUBLISH does not decode",
                     decode_publish(framed, q));
  dsekp::fuzz::check(
      q.topic == p.topic && q.qos == p.qos && q.retain == p.retain && q.dup == p.dup &&
          q.packet_id == p.packet_id &&
          std::equal(q.payload.begin(), q.payload.end(), p.payload.begin(), p.payload.end()) &&
          std::equal(q.correlation_data.begin(), q.correlation_data.end(),
                     p.correlation_data.begin(), p.correlation_data.end()),
      "PUBLISH round trip changed a field");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dsekp::ByteView in(data, size);
  while (!in.empty()) {
    RawPacket packet;
    std::size_t consumed = 0;
    if (next_packet(in, 8192, packet, consumed) != Framing::packet) return 0;
    dsekp::fuzz::check(consumed > 0 && consumed <= in.size(), "framing consumed a wrong size");
    switch (packet.type()) {
      case PacketType::publish:
        check_publish_round_trip(packet);
        break;
      case PacketType::connack: {
        Connack c;
        (void)decode_connack(packet, c);
        break;
      }
      case PacketType::puback:
      case PacketType::suback:
      case PacketType::unsuback: {
        Ack a;
        (void)decode_ack(packet, a);
        break;
      }
      case PacketType::disconnect: {
        Disconnect d;
        (void)decode_disconnect(packet, d);
        break;
      }
      default:
        break;
    }
    in = in.subspan(consumed);
  }
  return 0;
}
