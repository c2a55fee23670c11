// MQTT 5 packets (see mqtt5_packets.hpp). Section numbers are OASIS MQTT Version 5.0's.
#include "edge/mqtt_builtin/mqtt5_packets.hpp"

namespace dsekp::edge::mqtt_builtin {
namespace {

using Bytes = std::vector<std::uint8_t>;

// --- Writing --------------------------------------------------------------------------------

void put_u8(Bytes& out, std::uint32_t v) {
  out.push_back(static_cast<std::uint8_t>(v));
}

void put_u16(Bytes& out, std::uint32_t v) {
  out.push_back(static_cast<std::uint8_t>(v >> 8));
  out.push_back(static_cast<std::uint8_t>(v));
}

void put_u32(Bytes& out, std::uint32_t v) {
  put_u16(out, v >> 16);
  put_u16(out, v & 0xffff);
}

// A Variable Byte Integer (1.5.5).
void put_varint(Bytes& out, std::size_t v) {
  do {
    std::uint8_t b = v % 128;
    v /= 128;
    if (v > 0) b |= 0x80;
    out.push_back(b);
  } while (v > 0);
}

std::size_t varint_size(std::size_t v) noexcept {
  std::size_t n = 1;
  while (v >= 128) {
    v /= 128;
    ++n;
  }
  return n;
}

// A UTF-8 Encoded String or Binary Data (1.5.4, 1.5.6): a two-byte length, then the bytes.
void put_text(Bytes& out, std::string_view s) {
  put_u16(out, static_cast<std::uint32_t>(s.size()));
  out.insert(out.end(), s.begin(), s.end());
}

void put_binary(Bytes& out, ByteView b) {
  put_u16(out, static_cast<std::uint32_t>(b.size()));
  out.insert(out.end(), b.begin(), b.end());
}

// Appends the fixed header for a body of `body_size` bytes that the caller appends next.
void put_fixed_header(Bytes& out, std::uint8_t first, std::size_t body_size) {
  out.push_back(first);
  put_varint(out, body_size);
}

// Packets whose body is built first (their size is not worth computing ahead).
void put_packet(Bytes& out, std::uint8_t first, const Bytes& body) {
  put_fixed_header(out, first, body.size());
  out.insert(out.end(), body.begin(), body.end());
}

// --- Reading --------------------------------------------------------------------------------

// Reads a packet body front to back; any read past its end sets `failed` and yields zeros.
class Reader {
 public:
  explicit Reader(ByteView bytes) : bytes_(bytes) {}
  [[nodiscard]] bool failed() const noexcept { return failed_; }
  [[nodiscard]] std::size_t left() const noexcept { return bytes_.size() - at_; }
  std::uint8_t u8() { return ok(1) ? bytes_[at_++] : 0; }
  std::uint16_t u16() {
    if (!ok(2)) return 0;
    const auto v = static_cast<std::uint16_t>((bytes_[at_] << 8) | bytes_[at_ + 1]);
    at_ += 2;
    return v;
  }
  std::uint32_t u32() {
    const std::uint32_t high = u16();
    return (high << 16) | u16();
  }
  std::uint32_t varint() {
    std::uint32_t v = 0;
    for (int shift = 0; shift <= 21; shift += 7) {
      const std::uint8_t b = u8();
      v |= static_cast<std::uint32_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    failed_ = true;  // more than four bytes (1.5.5)
    return 0;
  }
  ByteView binary() { return take(u16()); }
  std::string_view text() {
    const ByteView b = binary();
    return {reinterpret_cast<const char*>(b.data()), b.size()};
  }
  ByteView take(std::size_t n) {
    if (!ok(n)) return {};
    const ByteView v = bytes_.subspan(at_, n);
    at_ += n;
    return v;
  }
  ByteView rest() { return take(left()); }

 private:
  bool ok(std::size_t n) {
    if (failed_ || left() < n) failed_ = true;
    return !failed_;
  }
  ByteView bytes_;
  std::size_t at_ = 0;
  bool failed_ = false;
};

// The value types of the properties (2.2.2.2).
enum class PropertyType : std::uint8_t { none, byte, u16, u32, varint, text, binary, text_pair };

PropertyType property_type(std::uint32_t id) noexcept {
  switch (id) {
    case 0x01:
    case 0x17:
    case 0x19:
    case 0x24:
    case 0x25:
    case 0x28:
    case 0x29:
    case 0x2A:
      return PropertyType::byte;
    case 0x13:
    case 0x21:
    case 0x22:
    case 0x23:
      return PropertyType::u16;
    case 0x02:
    case 0x11:
    case 0x18:
    case 0x27:
      return PropertyType::u32;
    case 0x0B:
      return PropertyType::varint;
    case 0x03:
    case 0x08:
    case 0x12:
    case 0x15:
    case 0x1A:
    case 0x1C:
    case 0x1F:
      return PropertyType::text;
    case 0x09:
    case 0x16:
      return PropertyType::binary;
    case 0x26:
      return PropertyType::text_pair;
    default:
      return PropertyType::none;
  }
}

// One property as read: its identifier and its value in the field its type uses.
struct Property {
  std::uint32_t id = 0;
  std::uint32_t number = 0;  // byte, u16, u32, varint
  ByteView bytes;            // text, binary (a pair's value is skipped: nothing here reads one)
};

// Reads a property list (2.2.2.1) and calls `on(property)` for each; "" or what is wrong.
template <typename On>
const char* read_properties(Reader& r, On&& on) {
  const std::uint32_t length = r.varint();
  if (r.failed() || length > r.left()) return "a property length past the packet's end";
  Reader props(r.take(length));
  while (props.left() > 0) {
    Property p;
    p.id = props.varint();
    switch (property_type(p.id)) {
      case PropertyType::byte:
        p.number = props.u8();
        break;
      case PropertyType::u16:
        p.number = props.u16();
        break;
      case PropertyType::u32:
        p.number = props.u32();
        break;
      case PropertyType::varint:
        p.number = props.varint();
        break;
      case PropertyType::text:
      case PropertyType::binary:
        p.bytes = props.binary();
        break;
      case PropertyType::text_pair:
        p.bytes = props.binary();
        (void)props.binary();
        break;
      case PropertyType::none:
        return "an unknown property identifier";
    }
    if (props.failed()) return "a property value past the property list's end";
    if (const char* problem = on(p); *problem != '\0') return problem;
  }
  return "";
}

std::string_view as_text(ByteView b) noexcept {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

}  // namespace

Framing next_packet(ByteView in, std::uint32_t max_packet_size, RawPacket& packet,
                    std::size_t& consumed) noexcept {
  std::size_t length = 0;
  std::size_t pos = 1;
  for (int shift = 0;; shift += 7) {
    if (shift > 21) return Framing::malformed;
    if (pos >= in.size()) return Framing::need_more;
    const std::uint8_t b = in[pos++];
    length |= static_cast<std::size_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) break;
  }
  if (max_packet_size > 0 && pos + length > max_packet_size) return Framing::too_large;
  if (in.size() - pos < length) return Framing::need_more;
  packet = {in[0], in.subspan(pos, length)};
  consumed = pos + length;
  return Framing::packet;
}

const char* decode_publish(const RawPacket& packet, Publish& out) {
  out = {};
  out.qos = (packet.first >> 1) & 3;
  out.retain = (packet.first & 1) != 0;
  out.dup = (packet.first & 8) != 0;
  if (out.qos == 3) return "PUBLISH with QoS 3 (3.3.1.2)";
  if (out.qos == 0 && out.dup) return "PUBLISH at QoS 0 with DUP set (3.3.1.1)";
  Reader r(packet.body);
  out.topic = r.text();
  if (out.qos > 0) {
    out.packet_id = r.u16();
    if (!r.failed() && out.packet_id == 0) return "PUBLISH with packet identifier 0 (2.2.1)";
  }
  if (r.failed()) return "PUBLISH shorter than its topic and packet identifier";
  const char* problem = read_properties(r, [&out](const Property& p) -> const char* {
    switch (p.id) {
      case 0x08:
        out.response_topic = as_text(p.bytes);
        return "";
      case 0x09:
        out.correlation_data = p.bytes;
        return "";
      case 0x23:
        return "PUBLISH with a Topic Alias the client never allowed (3.3.2.3.4)";
      case 0x01:
      case 0x02:
      case 0x03:
      case 0x0B:
      case 0x26:
        return "";
      default:
        return "PUBLISH with a property PUBLISH does not have (3.3.2.3)";
    }
  });
  if (*problem != '\0') return problem;
  if (out.topic.empty()) return "PUBLISH without a topic name (3.3.2.1)";
  out.payload = r.rest();
  return "";
}

const char* decode_connack(const RawPacket& packet, Connack& out) {
  out = {};
  if (packet.first != 0x20) return "CONNACK with reserved flags set (2.1.3)";
  Reader r(packet.body);
  const std::uint8_t flags = r.u8();
  out.reason = r.u8();
  if (r.failed()) return "CONNACK shorter than 2 bytes";
  if ((flags & 0xfe) != 0) return "CONNACK with reserved acknowledge flags set (3.2.2.1)";
  out.session_present = (flags & 1) != 0;
  // A refusal may come without properties (a broker that speaks an older version does so).
  if (r.left() == 0) return "";
  const char* problem = read_properties(r, [&out](const Property& p) -> const char* {
    switch (p.id) {
      case 0x21:
        if (p.number == 0) return "CONNACK with Receive Maximum 0 (3.2.2.3.3)";
        out.receive_maximum = static_cast<std::uint16_t>(p.number);
        return "";
      case 0x27:
        if (p.number == 0) return "CONNACK with Maximum Packet Size 0 (3.2.2.3.6)";
        out.maximum_packet_size = p.number;
        return "";
      case 0x24:
        if (p.number > 1) return "CONNACK with a Maximum QoS other than 0 or 1 (3.2.2.3.4)";
        out.maximum_qos = static_cast<std::uint8_t>(p.number);
        return "";
      case 0x25:
        out.retain_available = p.number != 0;
        return "";
      case 0x13:
        out.server_keep_alive = static_cast<std::int32_t>(p.number);
        return "";
      case 0x1F:
        out.reason_string = as_text(p.bytes);
        return "";
      case 0x11:
      case 0x12:
      case 0x15:
      case 0x16:
      case 0x1A:
      case 0x1C:
      case 0x22:
      case 0x26:
      case 0x28:
      case 0x29:
      case 0x2A:
        return "";
      default:
        return "CONNACK with a property CONNACK does not have (3.2.2.3)";
    }
  });
  return problem;
}

const char* decode_ack(const RawPacket& packet, Ack& out) {
  out = {};
  const PacketType type = packet.type();
  if ((packet.first & 0x0f) != 0) return "acknowledgement with reserved flags set (2.1.3)";
  Reader r(packet.body);
  out.packet_id = r.u16();
  if (r.failed()) return "acknowledgement shorter than its packet identifier";
  if (type == PacketType::puback) {
    if (r.left() == 0) {
      out.reasons.push_back(0);
      return "";
    }
    out.reasons.push_back(r.u8());
    if (r.left() == 0) return "";
  }
  const char* problem = read_properties(r, [](const Property& p) -> const char* {
    return p.id == 0x1F || p.id == 0x26 ? "" : "acknowledgement with a property it does not have";
  });
  if (*problem != '\0') return problem;
  if (type != PacketType::puback) {
    const ByteView codes = r.rest();
    if (codes.empty()) return "SUBACK or UNSUBACK without a reason code (3.9.3, 3.11.3)";
    out.reasons.assign(codes.begin(), codes.end());
  } else if (r.left() != 0) {
    return "PUBACK with bytes after its properties";
  }
  return "";
}

const char* decode_disconnect(const RawPacket& packet, Disconnect& out) {
  out = {};
  if (packet.first != 0xe0) return "DISCONNECT with reserved flags set (2.1.3)";
  Reader r(packet.body);
  if (r.left() == 0) return "";
  out.reason = r.u8();
  if (r.left() == 0) return "";
  const char* problem = read_properties(r, [&out](const Property& p) -> const char* {
    if (p.id == 0x1F) out.reason_string = as_text(p.bytes);
    return p.id == 0x1F || p.id == 0x26 || p.id == 0x1C || p.id == 0x11
               ? ""
               : "DISCONNECT with a property DISCONNECT does not have (3.14.2.2)";
  });
  if (*problem != '\0') return problem;
  return r.left() == 0 ? "" : "DISCONNECT with bytes after its properties";
}

void append_connect(Bytes& out, const ConnectRequest& request) {
  const bool will = !request.will_topic.empty();
  const bool login = !request.username.empty();
  Bytes body;
  put_text(body, "MQTT");
  put_u8(body, 5);                  // protocol version
  std::uint8_t flags = 0;           // Clean Start 0: keep the session
  if (login) flags |= 0x80 | 0x40;  // user name, password
  if (will) flags |= 0x04 | 0x08 | (request.will_retain ? 0x20 : 0);  // will, QoS 1, retain
  put_u8(body, flags);
  put_u16(body, request.keep_alive_s);
  Bytes props;
  put_u8(props, 0x11);
  put_u32(props, request.session_expiry_s);
  put_u8(props, 0x21);
  put_u16(props, request.receive_maximum);
  if (request.maximum_packet_size > 0) {
    put_u8(props, 0x27);
    put_u32(props, request.maximum_packet_size);
  }
  put_varint(body, props.size());
  body.insert(body.end(), props.begin(), props.end());
  put_text(body, request.client_id);
  if (will) {
    put_varint(body, 0);  // no will properties
    put_text(body, request.will_topic);
    put_binary(body, request.will_payload);
  }
  if (login) {
    put_text(body, request.username);
    put_text(body, request.password);
  }
  put_packet(out, 0x10, body);
  secure_wipe(body);  // it held the password
}

void append_subscribe(Bytes& out, std::uint16_t packet_id,
                      const std::vector<std::string>& filters) {
  Bytes body;
  put_u16(body, packet_id);
  put_varint(body, 0);  // no properties
  for (const std::string& filter : filters) {
    put_text(body, filter);
    put_u8(body, 1);  // QoS 1; No Local, Retain As Published and Retain Handling 0
  }
  put_packet(out, 0x82, body);
}

void append_unsubscribe(Bytes& out, std::uint16_t packet_id,
                        const std::vector<std::string>& filters) {
  Bytes body;
  put_u16(body, packet_id);
  put_varint(body, 0);
  for (const std::string& filter : filters) put_text(body, filter);
  put_packet(out, 0xa2, body);
}

namespace {

std::size_t publish_properties_size(ByteView correlation_data) noexcept {
  return correlation_data.empty() ? 0 : 1 + 2 + correlation_data.size();
}

std::size_t publish_body_size(std::string_view topic, ByteView payload, std::uint8_t qos,
                              ByteView correlation_data) noexcept {
  const std::size_t props = publish_properties_size(correlation_data);
  return 2 + topic.size() + (qos > 0 ? 2 : 0) + varint_size(props) + props + payload.size();
}

}  // namespace

std::size_t publish_size(std::string_view topic, ByteView payload, std::uint8_t qos,
                         ByteView correlation_data) noexcept {
  const std::size_t body = publish_body_size(topic, payload, qos, correlation_data);
  return 1 + varint_size(body) + body;
}

void append_publish(Bytes& out, std::string_view topic, ByteView payload, std::uint8_t qos,
                    bool retain, bool dup, std::uint16_t packet_id, ByteView correlation_data) {
  const auto first =
      static_cast<std::uint8_t>(0x30 | (dup ? 8 : 0) | (qos << 1) | (retain ? 1 : 0));
  out.reserve(out.size() + publish_size(topic, payload, qos, correlation_data));
  put_fixed_header(out, first, publish_body_size(topic, payload, qos, correlation_data));
  put_text(out, topic);
  if (qos > 0) put_u16(out, packet_id);
  put_varint(out, publish_properties_size(correlation_data));
  if (!correlation_data.empty()) {
    put_u8(out, 0x09);
    put_binary(out, correlation_data);
  }
  out.insert(out.end(), payload.begin(), payload.end());
}

void append_puback(Bytes& out, std::uint16_t packet_id) {
  put_u8(out, 0x40);
  put_u8(out, 2);  // success: no reason code, no properties (3.4.2.1)
  put_u16(out, packet_id);
}

void append_pingreq(Bytes& out) {
  put_u8(out, 0xc0);
  put_u8(out, 0);
}

void append_disconnect(Bytes& out, std::uint8_t reason) {
  put_u8(out, 0xe0);
  if (reason == 0) {
    put_u8(out, 0);
    return;
  }
  put_u8(out, 1);
  put_u8(out, reason);
}

void mark_dup(Bytes& publish) noexcept {
  if (!publish.empty()) publish[0] |= 0x08;
}

}  // namespace dsekp::edge::mqtt_builtin
