// The link emulator's event loop (see relay_loop.hpp for the model).
#include "linkemu/relay_loop.hpp"

#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace dsekp::linkemu {
namespace {

// epoll tags: these three, or connection id * 2 + side (ids start at 2).
constexpr std::uint64_t kListenTag = 0;
constexpr std::uint64_t kWakeupTag = 1;
constexpr std::uint64_t kTimerTag = 2;

constexpr std::size_t kMaxChunk = 64 * 1024;
// Under a rate limit a chunk is about 10 ms of the link's bytes, so that a rate is applied
// smoothly rather than in bursts of whatever the sender wrote at once.
constexpr std::uint64_t kRateChunksPerSecond = 100;
constexpr std::size_t kMinRateChunk = 512;
// Reads per readiness event and accepts per event: enough to keep up, few enough to be fair.
constexpr int kReadsPerEvent = 4;
constexpr int kAcceptsPerEvent = 64;
constexpr auto kAcceptPause = std::chrono::milliseconds(100);
constexpr int kMaxEvents = 256;

bool would_block(int e) {
  return e == EAGAIN || e == EWOULDBLOCK;
}

}  // namespace

RelayLoop::RelayLoop(UniqueFd listen, const SocketAddress& target, const LinkSpec& spec,
                     std::uint64_t seed, LinkCounters& counters)
    : listen_(std::move(listen)),
      target_(target),
      counters_(counters),
      spec_(spec),
      draws_(spec, seed),
      scratch_(kMaxChunk) {}

RelayLoop::~RelayLoop() = default;

bool RelayLoop::init(std::string& error) {
  epoll_.reset(::epoll_create1(EPOLL_CLOEXEC));
  wakeup_.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  timer_.reset(::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
  if (!epoll_.valid() || !wakeup_.valid() || !timer_.valid()) {
    error = "epoll/eventfd/timerfd: " + errno_text(errno);
    return false;
  }
  for (const auto& [fd, tag] :
       {std::pair{listen_.get(), kListenTag}, std::pair{wakeup_.get(), kWakeupTag},
        std::pair{timer_.get(), kTimerTag}}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = tag;
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
      error = "epoll_ctl: " + errno_text(errno);
      return false;
    }
  }
  return true;
}

void RelayLoop::request_stop() {
  stop_.store(true);
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto n = ::write(wakeup_.get(), &one, sizeof one);
}

void RelayLoop::set_spec(const LinkSpec& spec) {
  std::unique_lock lock(commands_mutex_);
  pending_spec_ = spec;
  submit_and_wait(lock);
}

void RelayLoop::cut_connections(DropMode how) {
  std::unique_lock lock(commands_mutex_);
  pending_cut_ = how;
  submit_and_wait(lock);
}

void RelayLoop::submit_and_wait(std::unique_lock<std::mutex>& lock) {
  const std::uint64_t ticket = ++commands_submitted_;
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto n = ::write(wakeup_.get(), &one, sizeof one);
  commands_done_.wait(lock, [&] { return commands_applied_ >= ticket || ended_; });
}

void RelayLoop::run() {
  std::array<epoll_event, kMaxEvents> events{};
  while (!stop_.load()) {
    const int n = ::epoll_wait(epoll_.get(), events.data(), kMaxEvents, -1);
    if (n < 0 && errno != EINTR) break;  // only a programming error gets here
    const Clock::time_point now = Clock::now();
    for (int i = 0; i < n; ++i) handle_event(events[static_cast<std::size_t>(i)], now);
    run_due_wakes(Clock::now());
    for (const std::uint64_t id : dead_) connections_.erase(id);
    dead_.clear();
    arm_timer();
  }
  // Stopped: every socket closed, queued bytes discarded, no one left waiting for a command.
  for (auto& [id, c] : connections_)
    if (!c->dead) close_connection(*c, Close::graceful);
  connections_.clear();
  const std::lock_guard lock(commands_mutex_);
  ended_ = true;
  commands_done_.notify_all();
}

void RelayLoop::handle_event(const epoll_event& event, Clock::time_point now) {
  const std::uint64_t tag = event.data.u64;
  if (tag == kListenTag) {
    accept_all(now);
    return;
  }
  if (tag == kWakeupTag || tag == kTimerTag) {
    std::uint64_t value = 0;
    [[maybe_unused]] const auto r =
        ::read(tag == kWakeupTag ? wakeup_.get() : timer_.get(), &value, sizeof value);
    if (tag == kTimerTag) timer_at_ = Clock::time_point::max();
    if (tag == kWakeupTag) apply_commands();
    return;
  }
  const auto it = connections_.find(tag / 2);
  if (it == connections_.end() || it->second->dead) return;  // closed earlier in this batch
  Connection& c = *it->second;
  const int side = static_cast<int>(tag % 2);
  if (side == downstream && c.connecting) {
    finish_connect(c);
    return;
  }
  if ((event.events & EPOLLERR) != 0) {
    // A reset or other socket error: nothing more can go through this connection.
    close_connection(c, Close::rst);
    return;
  }
  if ((event.events & EPOLLOUT) != 0) {
    // fd[side] is the destination of the other direction.
    c.flow[1 - side].blocked = false;
    flush(c, 1 - side, now);
    if (c.dead) return;
  }
  if ((event.events & (EPOLLIN | EPOLLHUP)) != 0) on_readable(c, side, now);
}

void RelayLoop::accept_all(Clock::time_point now) {
  for (int i = 0; i < kAcceptsPerEvent; ++i) {
    UniqueFd client(::accept4(listen_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!client.valid()) {
      const int e = errno;
      if (would_block(e)) return;
      if (e == EINTR || e == ECONNABORTED) continue;
      LinkCounters::add(counters_.accept_failures);
      // Out of descriptors or memory: the listening socket would stay readable and spin the
      // loop, so stop watching it for a moment.
      if (accepting_) {
        ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, listen_.get(), nullptr);
        accepting_ = false;
        wakes_.push(Wake{now + kAcceptPause, 0, 0});
      }
      return;
    }
    LinkCounters::add(counters_.connections_accepted);
    set_no_delay(client.get());
    auto c = std::make_unique<Connection>(spec_);
    c->id = next_id_++;
    UniqueFd target(::socket(target_.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!target.valid()) {
      LinkCounters::add(counters_.target_connect_failures);
      LinkCounters::add(counters_.connections_closed);
      close_with_reset(client.release());
      continue;
    }
    set_no_delay(target.get());
    if (::connect(target.get(), target_.get(), target_.length) == 0) {
      c->connecting = false;
    } else if (errno != EINPROGRESS) {
      LinkCounters::add(counters_.target_connect_failures);
      LinkCounters::add(counters_.connections_closed);
      close_with_reset(client.release());
      continue;
    }
    c->fd = {client.release(), target.release()};
    Connection& ref = *c;
    connections_.emplace(ref.id, std::move(c));
    update_interest(ref);
  }
}

void RelayLoop::finish_connect(Connection& c) {
  int error = 0;
  socklen_t length = sizeof error;
  if (::getsockopt(c.fd[downstream], SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
  if (error != 0) {
    // The client learns that its connection went nowhere as a real refusal would tell it.
    LinkCounters::add(counters_.target_connect_failures);
    close_connection(c, Close::rst);
    return;
  }
  c.connecting = false;
  update_interest(c);
}

std::size_t RelayLoop::read_size(const Connection& c, int d) const {
  std::size_t size = kMaxChunk;
  if (spec_.rate_bits_per_s > 0)
    size = std::clamp<std::size_t>(spec_.rate_bits_per_s / 8 / kRateChunksPerSecond, kMinRateChunk,
                                   kMaxChunk);
  if (c.blackholed) return size;
  const std::size_t queued = c.flow[d].queued;
  const std::size_t limit = spec_.queue_bytes;
  return queued >= limit ? 0 : std::min(size, limit - queued);
}

void RelayLoop::on_readable(Connection& c, int side, Clock::time_point now) {
  Flow& f = c.flow[side];
  for (int i = 0; i < kReadsPerEvent && !f.source_eof; ++i) {
    const std::size_t want = read_size(c, side);
    if (want == 0) break;
    const ssize_t n = ::recv(c.fd[side], scratch_.data(), want, MSG_DONTWAIT);
    if (n > 0) {
      on_chunk(c, side, static_cast<std::size_t>(n), now);
      if (c.dead) return;
      if (static_cast<std::size_t>(n) < want) break;  // drained: the next read would block
      continue;
    }
    if (n == 0) {
      on_source_eof(c, side, now);
      if (c.dead) return;
      break;
    }
    const int e = errno;
    if (would_block(e)) break;
    if (e == EINTR) continue;
    close_connection(c, Close::rst);  // e.g. ECONNRESET: pass the reset on
    return;
  }
  update_interest(c);
}

void RelayLoop::on_chunk(Connection& c, int d, std::size_t n, Clock::time_point now) {
  Flow& f = c.flow[d];
  LinkCounters::add(counters_.chunks[d]);
  if (c.blackholed) {
    LinkCounters::add(counters_.bytes_discarded[d], n);
    return;
  }
  if (draws_.drop()) {
    LinkCounters::add(counters_.drops);
    LinkCounters::add(counters_.bytes_discarded[d], n);
    cut(c, spec_.drop_mode);
    return;
  }
  if (draws_.stall()) {
    LinkCounters::add(counters_.stalls);
    c.stall_until = std::max(c.stall_until,
                             now + std::chrono::duration_cast<Clock::duration>(spec_.stall_time));
  }
  const Clock::time_point passed = f.bucket.pass(now, n);
  const Clock::time_point release = std::max(
      passed + std::chrono::duration_cast<Clock::duration>(draws_.delay()), f.last_release);
  f.last_release = release;

  std::size_t written = 0;
  const bool through = release <= now && c.stall_until <= now && f.queue.empty() && !f.blocked;
  if (through) {
    // Nothing to wait for: straight through, without a copy.
    const ssize_t sent = ::send(c.fd[1 - d], scratch_.data(), n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0 && !would_block(errno) && errno != EINTR) {
      LinkCounters::add(counters_.bytes_discarded[d], n);
      close_connection(c, Close::rst);
      return;
    }
    counters_.record_held(Clock::duration::zero());
    written = sent > 0 ? static_cast<std::size_t>(sent) : 0;
    LinkCounters::add(counters_.bytes[d], written);
    if (written == n) return;
    f.blocked = true;  // the rest waits for EPOLLOUT
  } else {
    LinkCounters::add(counters_.chunks_delayed[d]);
  }
  Chunk chunk;
  chunk.arrival = now;
  chunk.release = release;
  chunk.bytes.assign(scratch_.begin() + static_cast<std::ptrdiff_t>(written),
                     scratch_.begin() + static_cast<std::ptrdiff_t>(n));
  chunk.started = through;  // the rest of a chunk already released
  f.queue.push_back(std::move(chunk));
  const std::size_t held = n - written;
  f.queued += held;
  LinkCounters::add(counters_.queued_bytes, held);
  LinkCounters::raise_to(counters_.peak_direction_queued_bytes, f.queued);
  if (f.queue.size() == 1 && !f.blocked) flush(c, d, now);
}

void RelayLoop::on_source_eof(Connection& c, int d, Clock::time_point now) {
  Flow& f = c.flow[d];
  f.source_eof = true;
  if (c.blackholed) {
    // A peer gave up on the dead link: close both sides, as a real disconnect would end.
    close_connection(c, Close::fin);
    return;
  }
  // The FIN travels like the data before it: delayed, and never ahead of it.
  Chunk end;
  end.arrival = now;
  end.release =
      std::max(now + std::chrono::duration_cast<Clock::duration>(draws_.delay()), f.last_release);
  end.eof = true;
  f.last_release = end.release;
  f.queue.push_back(std::move(end));
  if (f.queue.size() == 1 && !f.blocked) flush(c, d, now);
}

void RelayLoop::flush(Connection& c, int d, Clock::time_point now) {
  Flow& f = c.flow[d];
  const int destination = c.fd[1 - d];
  while (!f.queue.empty()) {
    Chunk& chunk = f.queue.front();
    if (!chunk.started) {
      const Clock::time_point ready = std::max(chunk.release, c.stall_until);
      if (ready > now) {
        schedule(c, d, ready);
        break;
      }
      chunk.started = true;
      if (!chunk.eof) counters_.record_held(now - chunk.arrival);
    }
    if (chunk.eof) {
      ::shutdown(destination, SHUT_WR);
      f.finished = true;
      f.queue.pop_front();
      continue;
    }
    const std::size_t left = chunk.bytes.size() - chunk.offset;
    const ssize_t sent =
        ::send(destination, chunk.bytes.data() + chunk.offset, left, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      const int e = errno;
      if (e == EINTR) continue;
      if (would_block(e)) {
        f.blocked = true;
        break;
      }
      close_connection(c, Close::rst);  // EPIPE, ECONNRESET: the destination is gone
      return;
    }
    const auto n = static_cast<std::size_t>(sent);
    chunk.offset += n;
    f.queued -= n;
    counters_.queued_bytes.fetch_sub(n, std::memory_order_relaxed);
    LinkCounters::add(counters_.bytes[d], n);
    if (n < left) {
      f.blocked = true;
      break;
    }
    f.queue.pop_front();
  }
  if (f.queue.empty()) f.blocked = false;
  if (c.flow[0].finished && c.flow[1].finished) {
    close_connection(c, Close::graceful);  // both FINs relayed: the connection is over
    return;
  }
  update_interest(c);
}

void RelayLoop::schedule(Connection& c, int d, Clock::time_point at) {
  Flow& f = c.flow[d];
  if (f.wake <= at) return;  // an earlier wake is pending; it will reschedule
  f.wake = at;
  wakes_.push(Wake{at, c.id, d});
}

void RelayLoop::run_due_wakes(Clock::time_point now) {
  while (!wakes_.empty() && wakes_.top().at <= now) {
    const Wake w = wakes_.top();
    wakes_.pop();
    if (w.connection == 0) {
      if (!accepting_) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = kListenTag;
        ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, listen_.get(), &ev);
        accepting_ = true;
      }
      continue;
    }
    const auto it = connections_.find(w.connection);
    if (it == connections_.end() || it->second->dead) continue;
    Connection& c = *it->second;
    Flow& f = c.flow[w.flow];
    if (w.at >= f.wake) f.wake = Clock::time_point::max();
    if (!f.blocked) flush(c, w.flow, now);
  }
}

void RelayLoop::arm_timer() {
  const Clock::time_point next = wakes_.empty() ? Clock::time_point::max() : wakes_.top().at;
  if (next == timer_at_) return;
  itimerspec spec{};
  if (next != Clock::time_point::max()) {
    // steady_clock is CLOCK_MONOTONIC; an absolute timer never drifts with loop latency.
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(next.time_since_epoch());
    spec.it_value.tv_sec = static_cast<time_t>(ns.count() / 1000000000);
    spec.it_value.tv_nsec = static_cast<long>(ns.count() % 1000000000);
    if (spec.it_value.tv_sec == 0 && spec.it_value.tv_nsec == 0) spec.it_value.tv_nsec = 1;
  }
  ::timerfd_settime(timer_.get(), TFD_TIMER_ABSTIME, &spec, nullptr);
  timer_at_ = next;
}

void RelayLoop::update_interest(Connection& c) {
  if (c.dead) return;
  for (int side = 0; side < 2; ++side) {
    std::uint32_t events = 0;
    if (c.connecting) {
      if (side == downstream) events = EPOLLOUT;  // the connect's outcome
    } else {
      const Flow& source = c.flow[side];
      if (!source.source_eof && read_size(c, side) > 0) events |= EPOLLIN;
      if (c.flow[1 - side].blocked) events |= EPOLLOUT;
    }
    set_interest(c, side, events);
  }
}

void RelayLoop::set_interest(Connection& c, int side, std::uint32_t events) {
  std::uint32_t& current = c.interest[side];
  if (events == current) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = c.id * 2 + static_cast<std::uint64_t>(side);
  // A socket with nothing to wait for is removed rather than kept with no events: epoll reports
  // EPOLLHUP regardless of the mask, which would spin the loop on a paused, half-closed socket.
  const int op = events == 0 ? EPOLL_CTL_DEL : current == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
  ::epoll_ctl(epoll_.get(), op, c.fd[side], &ev);
  current = events;
}

void RelayLoop::cut(Connection& c, DropMode how) {
  if (how != DropMode::blackhole) {
    close_connection(c, how == DropMode::rst ? Close::rst : Close::fin);
    return;
  }
  // The link goes silent: what is held is lost, what arrives is discarded, and the peers only
  // find out by their own timeouts (or when one of them closes).
  c.blackholed = true;
  for (int d = 0; d < 2; ++d) {
    Flow& f = c.flow[d];
    counters_.queued_bytes.fetch_sub(f.queued, std::memory_order_relaxed);
    LinkCounters::add(counters_.bytes_discarded[d], f.queued);
    f.queue.clear();
    f.queued = 0;
    f.blocked = false;
  }
  update_interest(c);
}

void RelayLoop::close_connection(Connection& c, Close how) {
  if (c.dead) return;
  // Counters first: a peer that sees the close may read the stats at once.
  for (int d = 0; d < 2; ++d) {
    Flow& f = c.flow[d];
    counters_.queued_bytes.fetch_sub(f.queued, std::memory_order_relaxed);
    LinkCounters::add(counters_.bytes_discarded[d], f.queued);
    f.queue.clear();
    f.queued = 0;
  }
  LinkCounters::add(counters_.connections_closed);
  c.dead = true;
  dead_.push_back(c.id);
  for (int side = 0; side < 2; ++side) {
    const int fd = c.fd[side];
    if (fd < 0) continue;
    if (c.interest[side] != 0) ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
    c.interest[side] = 0;
    switch (how) {
      case Close::rst:
        close_with_reset(fd);
        break;
      case Close::fin:
        ::shutdown(fd, SHUT_RDWR);
        ::close(fd);
        break;
      case Close::graceful:
        ::close(fd);
        break;
    }
    c.fd[side] = -1;
  }
}

void RelayLoop::apply_commands() {
  std::optional<LinkSpec> spec;
  std::optional<DropMode> cut_how;
  std::uint64_t ticket = 0;
  {
    const std::lock_guard lock(commands_mutex_);
    spec.swap(pending_spec_);
    cut_how.swap(pending_cut_);
    ticket = commands_submitted_;
  }
  if (spec) {
    spec_ = *spec;
    draws_.set_spec(spec_);
    for (auto& [id, c] : connections_) {
      if (c->dead) continue;
      for (Flow& f : c->flow) f.bucket.configure(spec_.rate_bits_per_s, spec_.burst_bytes);
      update_interest(*c);  // the queue limit may have changed
    }
  }
  if (cut_how) {
    for (auto& [id, c] : connections_) {
      if (c->dead) continue;
      LinkCounters::add(counters_.cuts);
      cut(*c, *cut_how);
    }
  }
  const std::lock_guard lock(commands_mutex_);
  commands_applied_ = ticket;
  commands_done_.notify_all();
}

}  // namespace dsekp::linkemu
