// The INIT -> ACK handshake latency in microseconds, measured by a small device of our own inside
// the bench process: the protocol core's DeviceSession (the same code `dsekp device` runs, on the
// mbedTLS backend) over a libmosquitto client, against the running edge, one handshake at a time.
// The device's own handshake log has only millisecond columns, which cannot resolve a handshake of
// a few hundred microseconds on loopback; this probe times with steady_clock instead.
//
// One handshake: draw a session and encode the INIT (untimed), then t0 = now, publish the INIT on
// the device's INIT topic, read from the socket until the ACK for this INIT arrives and
// DeviceSession::handle_ack accepts it, t1 = now. t1 - t0 covers the publish, the broker, the
// edge's verification, state commit and ACK, the broker again, and the device's ACK verification
// and key derivation. No retransmission: an ACK that does not come within the timeout is counted
// as a timeout (on loopback with QoS 1 none is expected).
//
// Identities: the edge keeps the last 32 INIT nonces per device until they are older than its
// freshness window (5 min by default) and refuses further INITs while that cache is full, so one
// identity can open at most kHandshakesPerIdentity sessions in a run; the probe spreads its
// handshakes over several provisioned identities, round robin, each with its own connection
// (the broker's ACL lets a device read only its own ACK topic). The edge must also allow the
// INIT rate (`dsekp edge --init-burst 0 --init-refill-ms 0` or large enough values).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "device/credentials.hpp"
#include "dsekp/codec.hpp"

namespace dsekp::bench::e2e {

/// At most this many handshakes per identity and run (the edge's INIT replay cache holds 32).
inline constexpr std::size_t kHandshakesPerIdentity = 30;

/// Identities needed for `handshakes` handshakes.
[[nodiscard]] constexpr std::size_t probe_identities_for(std::size_t handshakes) noexcept {
  return (handshakes + kHandshakesPerIdentity - 1) / kHandshakesPerIdentity;
}

struct ProbeOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 1883;
  int qos = 1;  // of the INIT publish and the ACK subscription
  Encoding encoding = Encoding::json;
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds ack_timeout{5'000};
  /// Called often while waiting (e.g. to throw when Ctrl-C was pressed).
  std::function<void()> check;
};

struct ProbeResult {
  std::size_t attempted = 0;
  std::size_t ok = 0;
  std::size_t timeouts = 0;        // no valid ACK within ack_timeout
  std::vector<double> latency_us;  // one per ok handshake, in order
  double wall_s = 0;               // from the first INIT to the last ACK
};

class HandshakeProbe {
 public:
  /// Connects one MQTT client per identity (client id and login from the credentials; empty
  /// username: anonymous) and subscribes each to its ACK topic, waiting for every CONNACK and
  /// SUBACK. Throws std::runtime_error naming the device on a refused login, a failed
  /// subscription or a timeout.
  HandshakeProbe(std::vector<device::ProvisionedDevice> identities, ProbeOptions options);
  ~HandshakeProbe();
  HandshakeProbe(const HandshakeProbe&) = delete;
  HandshakeProbe& operator=(const HandshakeProbe&) = delete;

  /// Runs `count` handshakes one after the other. Throws std::invalid_argument if count exceeds
  /// kHandshakesPerIdentity x identities (minus those already run), std::runtime_error if the
  /// connection is lost.
  ProbeResult run(std::size_t count);

  struct Client;  // one identity's connection and session (probe.cpp)

 private:
  ProbeOptions options_;
  std::vector<std::unique_ptr<Client>> clients_;
  std::size_t next_ = 0;  // round-robin position
};

}  // namespace dsekp::bench::e2e
