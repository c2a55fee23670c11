// What a fleet run counts, shared by every device of the run (one thread: plain integers), and
// the summary built from it: the contract's JSON (--summary-json) and the human text on stderr.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace dsekp::device {

struct FleetCounters {
  // DATA frames.
  std::uint64_t packets_sent = 0;    // published, or kept by the library to send at a reconnect
  std::uint64_t packets_acked = 0;   // QoS 1: PUBACK received; QoS 0: equal to packets_sent
  std::uint64_t publish_errors = 0;  // publishes the client library did not send or keep to
                                     // send after a reconnect (any frame)
  std::uint64_t seal_errors = 0;     // the core refused to seal (should stay 0)
  // Handshakes (one per INIT sent at least once).
  std::uint64_t handshakes_started = 0;
  std::uint64_t handshakes_ok = 0;
  std::uint64_t handshakes_timeout = 0;
  std::uint64_t handshakes_rejected = 0;
  std::uint64_t retransmissions = 0;  // INIT transmissions after the first
  std::uint64_t stray_acks = 0;       // ACK for no outstanding INIT or another sessctr (ignored)
  std::uint64_t secret_store_failures = 0;  // ratchet: the next secret not stored, ACK refused
  std::uint64_t bad_acks = 0;               // ACK that did not decode, or failed verification
  // Downlink.
  std::uint64_t downlinks_received = 0;
  std::uint64_t downlinks_rejected = 0;
  // REKEY requests from the edge (it does not hold the device's session).
  std::uint64_t rekey_requests_accepted = 0;  // authenticated: a new handshake started
  std::uint64_t rekey_requests_ignored = 0;   // refused by the core (named in the log)
  // Devices and connections.
  std::uint64_t resets = 0;
  std::uint64_t connect_failures = 0;  // connection attempts that did not reach CONNACK 0
  std::uint64_t disconnects = 0;       // established connections lost
  std::uint64_t devices_failed = 0;    // devices that gave up (see DEVICE.md)
};

struct FleetSummary {
  std::string mode;      // "dsekp" | "psk"
  std::string encoding;  // "json" | "compact"
  std::uint64_t devices = 0;
  FleetCounters counters;
  double duration_s = 0;
  std::optional<double> connect_s;  // until every device was first ready, if they all were
  bool interrupted = false;
  int exit_code = 0;
};

/// The contract's fields plus ours (downlinks, failures, connect time), pretty-printed.
[[nodiscard]] std::string summary_json(const FleetSummary& summary);
/// A few lines for a person.
[[nodiscard]] std::string summary_text(const FleetSummary& summary);

}  // namespace dsekp::device
