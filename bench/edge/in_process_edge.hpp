// The edge's own pipeline (its storage with the daemon's defaults, EdgeService, MessageBatch)
// in this process, fed by ChunkedSubscriber: what draining a backlog costs an edge whose receive
// path reads its socket in large chunks instead of libmosquitto's read per header byte. Each
// read's messages are one burst, committed before their PUBACKs go out, as the daemon does.
// Used by `dsekp bench edge` after the child edge has stopped, on the same registry, state
// database and logs, so the devices' sessions are the ones their handshakes made.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "bench/edge/chunked_subscriber.hpp"

namespace dsekp::bench::edge {

class InProcessEdge final : public ChunkConsumer {
 public:
  /// Opens the edge's storage on `registry_db` (its state database beside it) and `logs_dir`.
  InProcessEdge(const std::string& registry_db, const std::string& logs_dir, bool csv);
  ~InProcessEdge() override;
  InProcessEdge(const InProcessEdge&) = delete;
  InProcessEdge& operator=(const InProcessEdge&) = delete;

  /// Every message from now on is handled as one on the DATA topic (psk: the PSK one), whatever
  /// topic the subscriber received it on.
  void receive_as(bool psk) noexcept { psk_ = psk; }
  /// Messages the edge did not accept, or answered, since the last call (a drain of DATA frames
  /// counts only with none), and the reason of the first refused.
  std::size_t take_refused(std::string& first_reason);

  void message(std::string_view topic, ByteView payload) override;
  void chunk_end() override;

 private:
  struct Parts;
  std::unique_ptr<Parts> parts_;
  bool psk_ = false;
};

}  // namespace dsekp::bench::edge
