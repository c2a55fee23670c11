// Summary writers (see fleet_counters.hpp).
#include "device/fleet_counters.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace dsekp::device {

std::string summary_json(const FleetSummary& s) {
  const FleetCounters& c = s.counters;
  const nlohmann::ordered_json out = {
      {"mode", s.mode},
      {"encoding", s.encoding},
      {"devices", s.devices},
      {"packets_sent", c.packets_sent},
      {"packets_acked", c.packets_acked},
      {"publish_errors", c.publish_errors},
      {"handshakes",
       {{"started", c.handshakes_started},
        {"ok", c.handshakes_ok},
        {"timeout", c.handshakes_timeout},
        {"rejected", c.handshakes_rejected},
        {"retransmissions", c.retransmissions},
        {"stray_acks", c.stray_acks},
        {"secret_store_failures", c.secret_store_failures},
        {"bad_acks", c.bad_acks}}},
      {"resets", c.resets},
      {"connect_failures", c.connect_failures},
      {"disconnects", c.disconnects},
      {"duration_s", s.duration_s},
      {"interrupted", s.interrupted},
      {"connect_s", s.connect_s ? nlohmann::ordered_json(*s.connect_s) : nullptr},
      {"devices_failed", c.devices_failed},
      {"downlinks", {{"received", c.downlinks_received}, {"rejected", c.downlinks_rejected}}},
      {"rekey_requests",
       {{"accepted", c.rekey_requests_accepted}, {"ignored", c.rekey_requests_ignored}}},
      {"seal_errors", c.seal_errors},
      {"exit_code", s.exit_code}};
  return out.dump(2) + "\n";
}

std::string summary_text(const FleetSummary& s) {
  const FleetCounters& c = s.counters;
  char buf[1024];
  std::string out;
  std::snprintf(buf, sizeof buf,
                "dsekp device: %s/%s, %llu device(s), %.1f s%s\n"
                "  DATA frames: %llu sent, %llu acknowledged, %llu publish error(s)\n",
                s.mode.c_str(), s.encoding.c_str(), static_cast<unsigned long long>(s.devices),
                s.duration_s, s.interrupted ? " (interrupted)" : "",
                static_cast<unsigned long long>(c.packets_sent),
                static_cast<unsigned long long>(c.packets_acked),
                static_cast<unsigned long long>(c.publish_errors));
  out += buf;
  if (s.mode == "dsekp") {
    std::snprintf(buf, sizeof buf,
                  "  handshakes: %llu started, %llu ok, %llu timeout, %llu rejected, "
                  "%llu INIT retransmission(s); %llu reset(s); %llu REKEY request(s) "
                  "accepted, %llu ignored\n",
                  static_cast<unsigned long long>(c.handshakes_started),
                  static_cast<unsigned long long>(c.handshakes_ok),
                  static_cast<unsigned long long>(c.handshakes_timeout),
                  static_cast<unsigned long long>(c.handshakes_rejected),
                  static_cast<unsigned long long>(c.retransmissions),
                  static_cast<unsigned long long>(c.resets),
                  static_cast<unsigned long long>(c.rekey_requests_accepted),
                  static_cast<unsigned long long>(c.rekey_requests_ignored));
    out += buf;
  }
  std::snprintf(buf, sizeof buf,
                "  connections: %llu failed attempt(s), %llu lost; %llu device(s) gave up",
                static_cast<unsigned long long>(c.connect_failures),
                static_cast<unsigned long long>(c.disconnects),
                static_cast<unsigned long long>(c.devices_failed));
  out += buf;
  if (s.connect_s) {
    std::snprintf(buf, sizeof buf, "; all connected after %.2f s", *s.connect_s);
    out += buf;
  }
  out += "\n";
  return out;
}

}  // namespace dsekp::device
