// The largest MQTT packet a DSEKP deployment has any use for, in one place for the two that
// enforce it: the edge announces it as its MQTT 5 Maximum Packet Size (the broker then never
// sends it anything larger), and `dsekp keys broker-config` sets it as the broker's
// max_packet_size (the broker refuses anything larger from any client, MQTT 3.1.1 too).
//
// Why 8 KiB: a frame is at most kMaxFrameSize (2,048) bytes; the rest is room for the topic (a
// deployment prefix plus a 64-byte dev_id), MQTT properties and an admin request (a 1,024-byte
// downlink in base64 plus its JSON), so every legitimate packet fits with margin. Without such a
// limit, libmosquitto allocates whatever length a packet header claims (up to 256 MiB) before
// the edge sees a byte of it.
#pragma once

#include <cstdint>

namespace dsekp::edge::mqtt {

inline constexpr std::uint32_t kMaxMqttPacketSize = 8192;

}  // namespace dsekp::edge::mqtt
