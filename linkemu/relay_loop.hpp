// Internal: the link emulator's event loop (one thread, epoll). It accepts connections on the
// listening socket, connects each to the target and moves bytes both ways through per-direction
// queues of (release time, bytes) chunks, as the LinkSpec says. LinkEmulator owns and drives it.
//
// Per chunk read from a source socket (at time `now`):
//   drop?   -> the connection is cut (spec.drop_mode); nothing more is relayed
//   stall?  -> nothing of the connection, in either direction, is released before now+stall_time
//   passed  =  token_bucket.pass(now, size)                    (rate, burst)
//   release =  max(passed + sampled delay, previous release in this direction)   (TCP order)
// A chunk is written when its release time has come and no stall holds the connection; the end
// of a stream (FIN) is relayed the same way, as an empty chunk. A direction holding spec.queue
// bytes is not read from until it has written some: TCP backpressure, bounded memory.
#pragma once

#include <sys/epoll.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "linkemu/chunk_draws.hpp"
#include "linkemu/link_counters.hpp"
#include "linkemu/link_spec.hpp"
#include "linkemu/socket_util.hpp"
#include "linkemu/token_bucket.hpp"

namespace dsekp::linkemu {

class RelayLoop {
 public:
  /// `listen` must be a non-blocking listening socket; `counters` must outlive the loop.
  RelayLoop(UniqueFd listen, const SocketAddress& target, const LinkSpec& spec, std::uint64_t seed,
            LinkCounters& counters);
  ~RelayLoop();
  RelayLoop(const RelayLoop&) = delete;
  RelayLoop& operator=(const RelayLoop&) = delete;

  /// Creates the epoll, eventfd and timerfd. False with `error` set.
  [[nodiscard]] bool init(std::string& error);
  /// Runs until request_stop(); then closes every connection. Call on one thread, once.
  void run();

  // Any thread. set_spec and cut_connections return once the loop has applied them (or has
  // ended), so that the caller's next bytes already meet the new link.
  void request_stop();
  void set_spec(const LinkSpec& spec);
  void cut_connections(DropMode how);

 private:
  using Clock = std::chrono::steady_clock;

  struct Chunk {
    Clock::time_point arrival;
    Clock::time_point release;
    std::vector<std::uint8_t> bytes;
    std::size_t offset = 0;
    bool started = false;  // released: a stall no longer holds a half-written chunk
    bool eof = false;      // the end of the stream, relayed as shutdown(SHUT_WR)
  };

  /// One direction of a connection: source fd[d] -> destination fd[1 - d].
  struct Flow {
    explicit Flow(const LinkSpec& spec) : bucket(spec.rate_bits_per_s, spec.burst_bytes) {}
    std::deque<Chunk> queue;
    std::size_t queued = 0;  // bytes in `queue` not yet written
    Clock::time_point last_release{};
    TokenBucket bucket;
    bool source_eof = false;  // read() returned 0
    bool blocked = false;     // the destination's send buffer is full: waiting for EPOLLOUT
    bool finished = false;    // the end of the stream has been relayed
    Clock::time_point wake = Clock::time_point::max();  // the pending timer, if any
  };

  struct Connection {
    explicit Connection(const LinkSpec& spec) : flow{Flow(spec), Flow(spec)} {}
    std::uint64_t id = 0;
    std::array<int, 2> fd{-1, -1};  // [upstream]: accepted client, [downstream]: target
    std::array<std::uint32_t, 2> interest{0, 0};  // epoll events registered (0 = not registered)
    bool connecting = true;
    bool dead = false;  // sockets closed; erased at the end of the loop iteration
    bool blackholed = false;
    Clock::time_point stall_until{};
    std::array<Flow, 2> flow;
  };

  struct Wake {
    Clock::time_point at;
    std::uint64_t connection;  // 0: resume accepting
    int flow;
    bool operator>(const Wake& other) const noexcept { return at > other.at; }
  };

  enum class Close { graceful, rst, fin };

  void handle_event(const epoll_event& event, Clock::time_point now);
  void accept_all(Clock::time_point now);
  void finish_connect(Connection& c);
  void on_readable(Connection& c, int side, Clock::time_point now);
  void on_chunk(Connection& c, int d, std::size_t n, Clock::time_point now);
  void on_source_eof(Connection& c, int d, Clock::time_point now);
  void flush(Connection& c, int d, Clock::time_point now);
  void schedule(Connection& c, int d, Clock::time_point at);
  void run_due_wakes(Clock::time_point now);
  void arm_timer();
  void update_interest(Connection& c);
  void set_interest(Connection& c, int side, std::uint32_t events);
  void cut(Connection& c, DropMode how);
  void close_connection(Connection& c, Close how);
  void apply_commands();
  /// Hands a command to the loop and waits until it has run it.
  void submit_and_wait(std::unique_lock<std::mutex>& lock);
  [[nodiscard]] std::size_t read_size(const Connection& c, int d) const;

  UniqueFd listen_;
  SocketAddress target_;
  LinkCounters& counters_;
  LinkSpec spec_;
  ChunkDraws draws_;
  UniqueFd epoll_;
  UniqueFd wakeup_;  // eventfd: commands and stop from other threads
  UniqueFd timer_;   // timerfd: the earliest Wake
  Clock::time_point timer_at_ = Clock::time_point::max();
  bool accepting_ = true;

  std::unordered_map<std::uint64_t, std::unique_ptr<Connection>> connections_;
  std::vector<std::uint64_t> dead_;
  std::uint64_t next_id_ = 2;  // ids 0 and 1 tag the listening socket, eventfd and timerfd
  std::priority_queue<Wake, std::vector<Wake>, std::greater<>> wakes_;
  std::vector<std::uint8_t> scratch_;

  std::atomic<bool> stop_{false};
  std::mutex commands_mutex_;
  std::condition_variable commands_done_;
  std::optional<LinkSpec> pending_spec_;
  std::optional<DropMode> pending_cut_;
  std::uint64_t commands_submitted_ = 0;
  std::uint64_t commands_applied_ = 0;
  bool ended_ = false;
};

}  // namespace dsekp::linkemu
