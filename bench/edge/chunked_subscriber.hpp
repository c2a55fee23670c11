// A second ceiling for `dsekp bench edge`: what draining the same queued frames costs a
// subscriber that reads its socket in large chunks and acknowledges each chunk's messages with
// one write. libmosquitto 2.0.11 reads every PUBLISH with about four read(2) calls and writes
// every PUBACK (and a wake-up byte) on its own; on this machine class a system call costs about
// a microsecond, so the difference between the two ceilings is what libmosquitto's receive path
// costs any edge built on it, and the chunked figure is what an edge could reach without it.
// The reader pauses whenever it has caught up (a read that did not fill its buffer): without
// the pause a reader faster than the broker is woken for every message (a poll, a read and a
// write for each), and those wake-ups cost more kernel time than libmosquitto's reads
// (`dsekp bench edge --chunked-pause-us 0` shows it); with it, messages gather between reads.
// The pause costs each message up to that much latency, as the edge's --batch-wait-ms would.
//
// A measuring instrument, not a client: MQTT 5 over plain TCP to a broker that behaves, one
// persistent session, QoS 1 messages only, no TLS, no reconnect, no keep-alive (the drain is
// short), and it throws on anything it does not expect. The edge does not use it; `dsekp bench
// edge` also runs the edge's own pipeline on it (in_process_edge.hpp) to measure what an edge
// with such a receive path would cost.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "dsekp/bytes.hpp"

#include "edge_bench.hpp"

namespace dsekp::bench::edge {

/// What a drain hands its messages to when it does more than count them: each read's messages
/// in order, then chunk_end(), and only after that are their PUBACKs written (an edge commits a
/// burst before it acknowledges it).
class ChunkConsumer {
 public:
  virtual ~ChunkConsumer() = default;
  virtual void message(std::string_view topic, ByteView payload) = 0;
  virtual void chunk_end() = 0;
};

class ChunkedSubscriber {
 public:
  /// Bytes asked of each read(2).
  static constexpr std::size_t kChunk = 64 * 1024;

  /// `receive_maximum`: the MQTT 5 Receive Maximum sent with CONNECT (as the edge's);
  /// `caught_up_pause`: the pause after a read that did not fill kChunk (0: none).
  ChunkedSubscriber(std::string host, int port, std::string client_id, std::string topic,
                    std::uint16_t receive_maximum, std::chrono::microseconds caught_up_pause);
  /// Connects with a session that never expires, subscribes at QoS 1 and disconnects.
  void create_session(std::chrono::milliseconds timeout);
  /// Connects to the session and drains the `expected` messages queued in it, handing them to
  /// `consumer` if there is one.
  DrainFigures drain(std::size_t expected, std::chrono::milliseconds timeout,
                     ChunkConsumer* consumer = nullptr);

 private:
  std::string host_;
  int port_ = 0;
  std::string client_id_;
  std::string topic_;
  std::uint16_t receive_maximum_ = 0;
  std::chrono::microseconds caught_up_pause_{0};
};

}  // namespace dsekp::bench::edge
