// The MQTT 5 packets the edge's built-in client writes and reads (OASIS MQTT Version 5.0,
// section 3), as pure functions over bytes: no socket, no clock, no allocation beyond the output
// vector. Everything read comes from the broker, so every length is checked against the bytes
// that are there before it is used, a packet larger than the size the client announced is
// refused from its fixed header (before any of it is buffered), and anything the standard calls
// malformed or a protocol error is refused with the rule it breaks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dsekp/bytes.hpp"

namespace dsekp::edge::mqtt_builtin {

/// MQTT Control Packet types (MQTT 5 2.1.2).
enum class PacketType : std::uint8_t {
  connect = 1,
  connack = 2,
  publish = 3,
  puback = 4,
  pubrec = 5,
  pubrel = 6,
  pubcomp = 7,
  subscribe = 8,
  suback = 9,
  unsubscribe = 10,
  unsuback = 11,
  pingreq = 12,
  pingresp = 13,
  disconnect = 14,
  auth = 15,
};

/// One whole packet in a receive buffer: its fixed header's first byte and its body (the bytes
/// after the remaining length). The body views the buffer.
struct RawPacket {
  std::uint8_t first = 0;
  ByteView body;
  [[nodiscard]] PacketType type() const noexcept { return static_cast<PacketType>(first >> 4); }
};

enum class Framing : std::uint8_t {
  packet,     // `packet` is the next whole packet; `consumed` bytes belong to it
  need_more,  // the buffer ends inside the next packet (nothing consumed)
  too_large,  // the next packet's remaining length is over the limit (MQTT 5 reason 0x95)
  malformed,  // a remaining length of more than four bytes (MQTT 5 1.5.5)
};

/// The next packet at the start of `in`: a packet whose whole size (fixed header included) is
/// over `max_packet_size` is refused as soon as its remaining length is read.
[[nodiscard]] Framing next_packet(ByteView in, std::uint32_t max_packet_size, RawPacket& packet,
                                  std::size_t& consumed) noexcept;

/// A received PUBLISH; the views point into the packet's body.
struct Publish {
  std::string_view topic;
  std::uint8_t qos = 0;
  bool retain = false;
  bool dup = false;
  std::uint16_t packet_id = 0;  // QoS 1 and 2 only
  ByteView payload;
  std::string_view response_topic;  // "": none
  ByteView correlation_data;        // empty: none
};

/// A received CONNACK with what the client must obey (MQTT 5 3.2.2.3).
struct Connack {
  bool session_present = false;
  std::uint8_t reason = 0;                // 0: accepted
  std::uint16_t receive_maximum = 65535;  // QoS 1 publishes the broker takes unacknowledged
  std::uint32_t maximum_packet_size = 0;  // 0: no limit beyond the protocol's
  std::uint8_t maximum_qos = 2;
  bool retain_available = true;
  std::int32_t server_keep_alive = -1;  // -1: not sent (the client's own keep-alive holds)
  std::string_view reason_string;
};

/// A received PUBACK, SUBACK or UNSUBACK: the packet id and the reason code(s), one per topic
/// filter for SUBACK and UNSUBACK (a PUBACK without one means success, MQTT 5 3.4.2.1).
struct Ack {
  std::uint16_t packet_id = 0;
  std::vector<std::uint8_t> reasons;
};

/// A received DISCONNECT (a body of 0 bytes means reason 0, MQTT 5 3.14.2.1).
struct Disconnect {
  std::uint8_t reason = 0;
  std::string_view reason_string;
};

/// Each decoder returns "" or the rule the packet breaks (a fixed text, for the log).
[[nodiscard]] const char* decode_publish(const RawPacket& packet, Publish& out);
[[nodiscard]] const char* decode_connack(const RawPacket& packet, Connack& out);
[[nodiscard]] const char* decode_ack(const RawPacket& packet, Ack& out);
[[nodiscard]] const char* decode_disconnect(const RawPacket& packet, Disconnect& out);

/// What CONNECT carries. Clean Start is always 0: the edge keeps its session (the broker queues
/// for it while it is away).
struct ConnectRequest {
  std::string_view client_id;
  std::string_view username;  // "": none (and then no password either)
  std::string_view password;
  std::uint16_t keep_alive_s = 30;
  std::uint32_t session_expiry_s = 0xFFFFFFFF;
  std::uint16_t receive_maximum = 65535;
  std::uint32_t maximum_packet_size = 0;  // 0: not announced
  std::string_view will_topic;            // "": no will
  ByteView will_payload;
  bool will_retain = false;  // the will goes at QoS 1
};

/// Each appends one whole packet to `out`. The caller keeps every string under 65,536 bytes and
/// the whole packet under the broker's maximum packet size (publish_size() tells).
void append_connect(std::vector<std::uint8_t>& out, const ConnectRequest& request);
/// One SUBSCRIBE for `filters`, each at QoS 1 with the default options (MQTT 5 3.8.3.1).
void append_subscribe(std::vector<std::uint8_t>& out, std::uint16_t packet_id,
                      const std::vector<std::string>& filters);
void append_unsubscribe(std::vector<std::uint8_t>& out, std::uint16_t packet_id,
                        const std::vector<std::string>& filters);
/// `packet_id` is ignored for QoS 0.
void append_publish(std::vector<std::uint8_t>& out, std::string_view topic, ByteView payload,
                    std::uint8_t qos, bool retain, bool dup, std::uint16_t packet_id,
                    ByteView correlation_data);
/// The whole size append_publish would write for these (to check against a broker's limit).
[[nodiscard]] std::size_t publish_size(std::string_view topic, ByteView payload, std::uint8_t qos,
                                       ByteView correlation_data) noexcept;
void append_puback(std::vector<std::uint8_t>& out, std::uint16_t packet_id);
void append_pingreq(std::vector<std::uint8_t>& out);
/// DISCONNECT with `reason` (0: normal; the session and its expiry interval stay).
void append_disconnect(std::vector<std::uint8_t>& out, std::uint8_t reason = 0);

/// The DUP flag set on an already encoded PUBLISH (a resend, MQTT 5 3.3.1.1).
void mark_dup(std::vector<std::uint8_t>& publish) noexcept;

}  // namespace dsekp::edge::mqtt_builtin
