// LinkEmulator: a user-space link emulator for TCP, no root needed. It listens on a port and
// relays every accepted connection to a target (e.g. devices -> emulator -> MQTT broker),
// holding each chunk of bytes it reads for a delay drawn per chunk, keeping TCP's order, limiting
// bandwidth with a token bucket, pausing the connection (stall) and cutting it (drop) at random,
// as a LinkSpec says, independently in each direction. One event-loop thread serves all
// connections. What it does not emulate (packet loss, reordering, the sender's view of the
// RTT) is in docs/LINK_EMULATOR.md.
//
//   LinkEmulator link(parse_link_spec("delay=250ms,jitter=80ms").spec.value(), /*seed=*/1);
//   std::string error;
//   const std::uint16_t port = link.start("127.0.0.1", 0, "127.0.0.1", broker_port, error);
//   if (port == 0) fail(error);
//   ... clients connect to 127.0.0.1:port ...
//   link.stop();  // or the destructor
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "linkemu/link_spec.hpp"
#include "linkemu/link_stats.hpp"

namespace dsekp::linkemu {

class LinkEmulator {
 public:
  /// `seed` seeds the one engine all per-chunk draws come from, in the order chunks arrive.
  LinkEmulator(const LinkSpec& spec, std::uint64_t seed);
  /// Stops (see stop()).
  ~LinkEmulator();
  LinkEmulator(const LinkEmulator&) = delete;
  LinkEmulator& operator=(const LinkEmulator&) = delete;

  /// Listens on listen_host:listen_port (0 = any free port), starts the event loop and returns
  /// the port actually listened on. The target is resolved now and connected once per accepted
  /// connection; a target that refuses gets the client's connection reset. Returns 0 with
  /// `error` set if a name does not resolve, the port cannot be bound, or start() ran before.
  [[nodiscard]] std::uint16_t start(const std::string& listen_host, std::uint16_t listen_port,
                                    const std::string& target_host, std::uint16_t target_port,
                                    std::string& error);

  /// Stops the loop and closes every socket (queued bytes are discarded). Idempotent; any
  /// thread; returns once the loop thread has ended.
  void stop();

  /// A snapshot of the counters; any thread, also after stop().
  [[nodiscard]] LinkStats stats() const;

  /// The numeric address listened on ("127.0.0.1", "::1"); empty before start().
  [[nodiscard]] std::string listen_address() const;

  /// Applies `spec` to every chunk read from now on, in every connection (chunks already held
  /// keep their release times). Any thread; returns once the loop uses it, so bytes sent after
  /// the call meet the new link. For fault injection, e.g. a link that degrades mid-run.
  void set_spec(const LinkSpec& spec);

  /// Cuts every open connection, as a drop of mode `how` would (blackhole: they go silent).
  /// Any thread; returns once done. Counted in LinkStats::cuts. Connections accepted later are
  /// relayed as usual.
  void cut_connections(DropMode how);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dsekp::linkemu
