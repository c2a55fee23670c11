// The fleet's event loop over non-blocking libmosquitto clients (see mqtt_fleet.hpp).
#include "device/mqtt_fleet.hpp"

#include <errno.h>
#include <mosquitto.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <queue>
#include <stdexcept>

namespace dsekp::device {
namespace {

constexpr std::uint32_t kSignalToken = UINT32_MAX;
constexpr std::uint64_t kTickMs = 1000;
constexpr std::uint32_t kRetryFirstMs = 1000;
constexpr std::uint32_t kRetryMaxMs = 30'000;
constexpr std::uint32_t kSignalDrainMs = 2000;
constexpr std::uint32_t kCloseTimeoutMs = 2000;
constexpr std::size_t kFailuresShown = 5;
// A DSEKP device subscribes to its ACK, downlink and REKEY topics, in that order.
constexpr int kSubscriptions = 3;

enum class Link : std::uint8_t {
  idle,         // not connected yet (waiting for the ramp)
  connecting,   // TCP + CONNECT sent, no CONNACK yet
  subscribing,  // CONNACK 0, SUBACK pending (DSEKP)
  ready,        // may publish
  retry_wait,   // connection lost or refused; reconnect at retry_at
  gave_up,      // the device stopped for good
  closing,      // DISCONNECT sent at the end of the run
};

/// A client without libmosquitto's wake-up socket pair. mosquitto_new() opens a socketpair per
/// client (2 descriptors) that only serves to interrupt a select() inside mosquitto_loop() or
/// the threaded loop; this loop uses neither. With it, 10,000 devices would need 30,000
/// descriptors; without it 10,000. mosquitto_new() goes on without the pair when socketpair()
/// fails (it only logs a warning), so the soft descriptor limit is lowered to 0 for the call
/// and restored right after. The process has one thread, so nothing else can open a file in
/// between. If the limit cannot be changed, the client keeps its pair.
mosquitto* new_client_without_wakeup_pair(const char* id, void* userdata) {
  rlimit saved{};
  const bool have_limit = getrlimit(RLIMIT_NOFILE, &saved) == 0;
  bool lowered = false;
  if (have_limit) {
    rlimit zero = saved;
    zero.rlim_cur = 0;
    lowered = setrlimit(RLIMIT_NOFILE, &zero) == 0;
  }
  mosquitto* m = mosquitto_new(id, true, userdata);
  if (lowered) setrlimit(RLIMIT_NOFILE, &saved);
  return m;
}

}  // namespace

bool publish_reaches_the_broker(int rc, int qos) noexcept {
  if (rc == MOSQ_ERR_SUCCESS) return true;
  // The send's errors, after the message was queued (send__publish -> packet__queue ->
  // packet__write, lib/packet_mosq.c).
  return qos > 0 && (rc == MOSQ_ERR_NO_CONN || rc == MOSQ_ERR_CONN_LOST || rc == MOSQ_ERR_ERRNO);
}

std::uint64_t monotonic_ms() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000u +
         static_cast<std::uint64_t>(ts.tv_nsec) / 1'000'000u;
}

struct MqttFleet::Slot final : Publisher {
  MqttFleet* fleet = nullptr;
  std::uint32_t index = 0;
  const ProvisionedDevice* device = nullptr;
  mosquitto* mosq = nullptr;
  std::unique_ptr<DeviceAgent> agent;
  Link link = Link::idle;
  bool attempted = false;  // connect_async called once (later: reconnect_async)
  bool ever_ready = false;
  bool finished = false;         // counted in finished_
  bool refusal_counted = false;  // CONNACK refusal already counted as a connect failure
  int fd = -1;                   // registered in the epoll set
  std::uint32_t events = 0;
  std::uint64_t due = kNever;  // scheduled wake-up (heap entry with `token`)
  std::uint32_t token = 0;
  std::uint64_t retry_at = kNever;
  std::uint32_t retry_backoff_ms = 0;
  std::uint64_t down_since = 0;  // monotonic ms since when there is no usable link; 0 = up
  int subscribe_mid = -1;

  bool publish(const std::string& topic, ByteView payload, int qos, int& mid) override {
    if (link != Link::ready) return false;
    return publish_reaches_the_broker(
        mosquitto_publish(mosq, &mid, topic.c_str(), static_cast<int>(payload.size()),
                          payload.data(), qos, false),
        qos);
  }
};

struct MqttFleet::Timers {
  struct Entry {
    std::uint64_t due;
    std::uint32_t index;
    std::uint32_t token;
    bool operator>(const Entry& o) const noexcept { return due > o.due; }
  };
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
};

// libmosquitto callbacks: `userdata` is the Slot. They only record what happened; publishing
// is left to service(), which runs right after the mosquitto_loop_* call that fired them.
struct SlotCallbacks {
  static MqttFleet::Slot& slot(void* userdata) { return *static_cast<MqttFleet::Slot*>(userdata); }

  static void set_ready(MqttFleet::Slot& s) {
    MqttFleet& f = *s.fleet;
    const std::uint64_t now = monotonic_ms();
    s.link = Link::ready;
    s.retry_backoff_ms = 0;
    s.down_since = 0;
    ++f.connected_now_;
    if (!s.ever_ready) {
      s.ever_ready = true;
      if (++f.ready_devices_ == f.slots_.size()) f.all_ready_ms_ = now;
    }
    s.agent->on_link_ready(now);
  }

  static void on_connect(mosquitto* m, void* userdata, int rc) {
    MqttFleet::Slot& s = slot(userdata);
    if (s.link != Link::connecting) return;
    if (rc != 0) {
      // The broker closes the connection after a refusal; on_disconnect follows.
      ++s.fleet->context_.counters->connect_failures;
      s.refusal_counted = true;
      if (rc == 4 || rc == 5)  // bad user name or password / not authorised: retrying won't help
        s.agent->give_up(std::string("the broker refused the login: ") +
                         mosquitto_connack_string(rc));
      return;
    }
    if (s.fleet->agent_config_.mode == Mode::psk) {
      set_ready(s);
      return;
    }
    const ProvisionedDevice& d = *s.device;
    char* topics[kSubscriptions] = {const_cast<char*>(d.topics.ack.c_str()),
                                    const_cast<char*>(d.topics.down.c_str()),
                                    const_cast<char*>(d.topics.rekey.c_str())};
    s.link = Link::subscribing;
    if (mosquitto_subscribe_multiple(m, &s.subscribe_mid, kSubscriptions, topics, 1, 0, nullptr) !=
        MOSQ_ERR_SUCCESS)
      s.agent->give_up("cannot subscribe to " + d.topics.ack);
  }

  static void on_subscribe(mosquitto*, void* userdata, int mid, int count, const int* granted) {
    MqttFleet::Slot& s = slot(userdata);
    if (s.link != Link::subscribing || mid != s.subscribe_mid) return;
    for (int i = 0; i < count; ++i) {
      if (granted[i] > 2) {  // 0x80: refused
        const DeviceTopics& t = s.device->topics;
        s.agent->give_up("the broker refused the subscription to " +
                         (i == 0   ? t.ack
                          : i == 1 ? t.down
                                   : t.rekey) +
                         " (check its ACL)");
        return;
      }
    }
    set_ready(s);
  }

  static void on_message(mosquitto*, void* userdata, const mosquitto_message* message) {
    MqttFleet::Slot& s = slot(userdata);
    if (message == nullptr || message->topic == nullptr || message->payloadlen < 0) return;
    s.agent->on_message(message->topic, ByteView(static_cast<const std::uint8_t*>(message->payload),
                                                 static_cast<std::size_t>(message->payloadlen)));
  }

  static void on_publish(mosquitto*, void* userdata, int mid) {
    MqttFleet::Slot& s = slot(userdata);
    if (s.fleet->agent_config_.qos > 0) s.agent->on_publish_acked(mid);
  }

  static void on_disconnect(mosquitto*, void* userdata, int) {
    MqttFleet::Slot& s = slot(userdata);
    MqttFleet& f = *s.fleet;
    const std::uint64_t now = monotonic_ms();
    if (s.link == Link::ready) --f.connected_now_;
    if (s.link == Link::closing || s.link == Link::gave_up) return;
    if (s.link == Link::ready || s.link == Link::subscribing) {
      ++f.context_.counters->disconnects;
    } else if (!s.refusal_counted) {
      ++f.context_.counters->connect_failures;  // TCP refused, reset or timed out
    }
    s.refusal_counted = false;
    s.agent->on_link_lost();
    s.link = Link::retry_wait;
    if (s.down_since == 0) s.down_since = now;
    s.retry_backoff_ms =
        s.retry_backoff_ms == 0 ? kRetryFirstMs : std::min(s.retry_backoff_ms * 2, kRetryMaxMs);
    s.retry_at = now + s.retry_backoff_ms;
    f.reschedule(s, s.retry_at);
  }
};

MqttFleet::MqttFleet(const std::vector<ProvisionedDevice>& devices, const AgentConfig& agent_config,
                     const AgentContext& context, const FleetLoopOptions& options)
    : agent_config_(agent_config),
      context_(context),
      options_(options),
      timers_(std::make_unique<Timers>()) {
  slots_.reserve(devices.size());
  for (std::size_t i = 0; i < devices.size(); ++i) {
    auto s = std::make_unique<Slot>();
    s->fleet = this;
    s->index = static_cast<std::uint32_t>(i);
    s->device = &devices[i];
    s->agent = std::make_unique<DeviceAgent>(devices[i], i, agent_config, context, *s);
    const std::string id(devices[i].credentials.dev_id.str());
    s->mosq = new_client_without_wakeup_pair(id.c_str(), s.get());
    if (s->mosq == nullptr)
      throw std::runtime_error("cannot create an MQTT client for " + id + ": " +
                               std::strerror(errno));
    // No Nagle delay: a small publish right after another one would otherwise wait for the
    // peer's delayed ACK (~40 ms on Linux), which would show up as latency that is not the
    // protocol's.
    mosquitto_int_option(s->mosq, MOSQ_OPT_TCP_NODELAY, 1);
    mosquitto_connect_callback_set(s->mosq, &SlotCallbacks::on_connect);
    mosquitto_disconnect_callback_set(s->mosq, &SlotCallbacks::on_disconnect);
    mosquitto_subscribe_callback_set(s->mosq, &SlotCallbacks::on_subscribe);
    mosquitto_message_callback_set(s->mosq, &SlotCallbacks::on_message);
    mosquitto_publish_callback_set(s->mosq, &SlotCallbacks::on_publish);
    if (!options.anonymous && !devices[i].username.empty())
      mosquitto_username_pw_set(
          s->mosq, devices[i].username.c_str(),
          devices[i].password.empty() ? nullptr : devices[i].password.c_str());
    slots_.push_back(std::move(s));
  }
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0)
    throw std::runtime_error(std::string("epoll_create1: ") + std::strerror(errno));
}

MqttFleet::~MqttFleet() {
  for (auto& s : slots_)
    if (s->mosq != nullptr) mosquitto_destroy(s->mosq);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

void MqttFleet::reschedule(Slot& s, std::uint64_t due) {
  if (due == s.due) return;
  s.due = due;
  ++s.token;
  if (due != kNever) timers_->heap.push({due, s.index, s.token});
}

void MqttFleet::sync_epoll(Slot& s) {
  const int fd = mosquitto_socket(s.mosq);
  if (fd != s.fd) {
    // libmosquitto closed the old socket (closing removes it from the epoll set), so there is
    // nothing to delete; the descriptor number may already belong to another client.
    s.fd = -1;
    s.events = 0;
  }
  if (fd < 0) return;
  const std::uint32_t want = EPOLLIN | (mosquitto_want_write(s.mosq) ? EPOLLOUT : 0u);
  if (s.fd == fd && s.events == want) return;
  epoll_event ev{};
  ev.events = want;
  ev.data.u32 = s.index;
  int op = s.fd == fd ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
  if (epoll_ctl(epoll_fd_, op, fd, &ev) != 0) {
    // The same number can come back for this client's new socket after a reconnect (then the
    // old registration is gone and MOD fails), or ADD can meet a registration we missed.
    op = op == EPOLL_CTL_MOD ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
    if (epoll_ctl(epoll_fd_, op, fd, &ev) != 0) return;
  }
  s.fd = fd;
  s.events = want;
}

void MqttFleet::report_failure(const Slot& s) {
  const std::string line = std::string(s.agent->dev_id()) + ": " + s.agent->failure();
  if (failures_.size() < kFailuresShown) {
    // Over the progress line, if one is drawn.
    std::fprintf(stderr, "%sdsekp device: %s\n", options_.progress ? "\r\x1b[K" : "", line.c_str());
    if (failures_.size() + 1 == kFailuresShown)
      std::fprintf(stderr, "dsekp device: (further devices that give up are only counted)\n");
    failures_.push_back(line);
  }
}

void MqttFleet::note_finished(Slot& s) {
  if (s.finished || !(s.agent->done() || s.agent->failed())) return;
  s.finished = true;
  ++finished_;
  if (s.agent->failed()) {
    report_failure(s);
    if (s.link == Link::retry_wait || s.link == Link::idle) s.link = Link::gave_up;
  }
}

void MqttFleet::start_connect(Slot& s, std::uint64_t now_ms) {
  if (s.down_since == 0) s.down_since = now_ms;
  s.retry_at = kNever;
  const int rc = s.attempted ? mosquitto_reconnect_async(s.mosq)
                             : mosquitto_connect_async(s.mosq, options_.broker_host.c_str(),
                                                       options_.broker_port, options_.keepalive_s);
  s.attempted = true;
  if (rc == MOSQ_ERR_SUCCESS) {
    s.link = Link::connecting;
  } else {
    ++context_.counters->connect_failures;
    s.link = Link::retry_wait;
    s.retry_backoff_ms =
        s.retry_backoff_ms == 0 ? kRetryFirstMs : std::min(s.retry_backoff_ms * 2, kRetryMaxMs);
    s.retry_at = now_ms + s.retry_backoff_ms;
  }
}

void MqttFleet::service(Slot& s, std::uint64_t now_ms) {
  if (s.link == Link::retry_wait && !s.agent->failed()) {
    // `down_since` is stamped by on_disconnect, which libmosquitto calls from inside this loop
    // iteration, after `now_ms` was read: it can be a millisecond or two ahead of `now_ms`, and
    // the unsigned difference would then wrap and give the device up at once (seen when the
    // link emulator reset every connection: all devices gave up "after 60 s" within a second).
    if (s.down_since != 0 && now_ms > s.down_since &&
        now_ms - s.down_since >= options_.give_up_ms) {
      s.agent->give_up("no connection to the broker for " +
                       std::to_string(options_.give_up_ms / 1000) + " s");
    } else if (now_ms >= s.retry_at && phase_ != Phase::closing) {
      start_connect(s, now_ms);
    }
  }
  std::uint64_t due = kNever;
  if (s.link == Link::ready) due = s.agent->step(now_ms);
  // Publishes outside callbacks are written at once; this sends what could not be (a full
  // socket buffer) and what callbacks queued (the SUBSCRIBE after CONNACK).
  if (mosquitto_socket(s.mosq) >= 0 && mosquitto_want_write(s.mosq))
    mosquitto_loop_write(s.mosq, 1);
  sync_epoll(s);
  note_finished(s);
  if (s.link == Link::retry_wait && !s.agent->failed()) {
    due = std::min(due, s.retry_at);
    due = std::min(due, s.down_since + options_.give_up_ms);
  }
  reschedule(s, due);
}

std::uint64_t MqttFleet::open_sockets() const {
  std::uint64_t n = 0;
  for (const auto& s : slots_)
    if (mosquitto_socket(s->mosq) >= 0) ++n;
  return n;
}

void MqttFleet::tick(std::uint64_t now_ms) {
  // Keepalive (PINGREQ when idle; a dead connection is closed and reported by on_disconnect).
  for (auto& s : slots_) {
    if (s->fd < 0) continue;
    mosquitto_loop_misc(s->mosq);
    if (mosquitto_socket(s->mosq) != s->fd || mosquitto_want_write(s->mosq)) service(*s, now_ms);
  }
}

void MqttFleet::begin_drain(EndReason reason, std::uint64_t now_ms) {
  if (phase_ != Phase::running) return;
  phase_ = Phase::draining;
  reason_ = reason;
  phase_deadline_ms_ =
      now_ms + (reason == EndReason::interrupted ? kSignalDrainMs : options_.drain_timeout_ms);
  for (auto& s : slots_) s->agent->stop();
}

void MqttFleet::begin_close(std::uint64_t now_ms) {
  phase_ = Phase::closing;
  phase_deadline_ms_ = now_ms + kCloseTimeoutMs;
  for (auto& s : slots_) {
    if (s->link == Link::ready) --connected_now_;
    const bool open = mosquitto_socket(s->mosq) >= 0;
    s->link = Link::closing;
    if (open) mosquitto_disconnect(s->mosq);  // writes DISCONNECT, then closes the socket
    sync_epoll(*s);
    reschedule(*s, kNever);
  }
}

FleetResult MqttFleet::run(const std::function<void()>& flush_logs) {
  // Signals arrive through a signalfd in the same epoll set: no handler, no race with the wait.
  sigset_t mask;
  sigset_t old_mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &mask, &old_mask);
  const int signal_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  if (signal_fd >= 0) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = kSignalToken;
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, signal_fd, &ev);
  }

  ProgressLine progress(options_.progress, slots_.size(), options_.expected_frames,
                        options_.duration_ms);
  start_ms_ = monotonic_ms();
  std::uint64_t next_tick = start_ms_ + kTickMs;
  std::size_t next_connect = 0;
  const double rate = options_.connect_rate > 0 ? options_.connect_rate : 1e12;
  unsigned signals = 0;
  std::array<epoll_event, 1024> events{};

  for (;;) {
    std::uint64_t now = monotonic_ms();

    // Connection ramp.
    if (phase_ == Phase::running) {
      const double elapsed_s = static_cast<double>(now - start_ms_) / 1000.0;
      const auto allowed = static_cast<std::size_t>(
          std::min<double>(static_cast<double>(slots_.size()), std::floor(elapsed_s * rate) + 1));
      while (next_connect < allowed) {
        Slot& s = *slots_[next_connect++];
        start_connect(s, now);
        service(s, now);
      }
    }

    // Due wake-ups.
    while (!timers_->heap.empty() && timers_->heap.top().due <= now) {
      const Timers::Entry e = timers_->heap.top();
      timers_->heap.pop();
      Slot& s = *slots_[e.index];
      if (e.token != s.token) continue;  // superseded
      s.due = kNever;
      service(s, now);
    }

    if (now >= next_tick) {
      tick(now);
      progress.update(*context_.counters, connected_now_, now - start_ms_);
      if (flush_logs) flush_logs();
      next_tick = now + kTickMs;
    }

    // Phases.
    if (phase_ == Phase::running) {
      if (signals > 0) {
        begin_drain(EndReason::interrupted, now);
      } else if (options_.duration_ms > 0 && now - start_ms_ >= options_.duration_ms) {
        begin_drain(EndReason::duration, now);
      } else if (agent_config_.count > 0 && finished_ == slots_.size()) {
        begin_drain(EndReason::completed, now);
      } else if (finished_ == slots_.size()) {
        begin_drain(EndReason::completed, now);  // every device gave up
      }
    }
    if (phase_ == Phase::draining) {
      const FleetCounters& c = *context_.counters;
      if (c.packets_acked >= c.packets_sent || now >= phase_deadline_ms_ || signals > 1)
        begin_close(now);
    }
    if (phase_ == Phase::closing &&
        (open_sockets() == 0 || now >= phase_deadline_ms_ || signals > 2))
      break;

    // Wait.
    std::uint64_t wake = next_tick;
    if (!timers_->heap.empty()) wake = std::min(wake, timers_->heap.top().due);
    if (phase_ == Phase::running && next_connect < slots_.size())
      wake = std::min(wake, start_ms_ + static_cast<std::uint64_t>(std::ceil(
                                            static_cast<double>(next_connect) * 1000.0 / rate)));
    if (phase_ != Phase::running) wake = std::min(wake, phase_deadline_ms_);
    if (phase_ == Phase::draining || phase_ == Phase::closing) wake = std::min(wake, now + 50);
    const int timeout =
        wake <= now ? 0 : static_cast<int>(std::min<std::uint64_t>(wake - now, 1000));
    const int n = epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), timeout);
    if (n < 0 && errno != EINTR) break;
    now = monotonic_ms();
    for (int i = 0; i < n; ++i) {
      const std::uint32_t index = events[i].data.u32;
      if (index == kSignalToken) {
        signalfd_siginfo info{};
        while (read(signal_fd, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) ++signals;
        continue;
      }
      if (index >= slots_.size()) continue;
      Slot& s = *slots_[index];
      if (events[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) mosquitto_loop_read(s.mosq, 1);
      if ((events[i].events & EPOLLOUT) && mosquitto_socket(s.mosq) >= 0)
        mosquitto_loop_write(s.mosq, 1);
      service(s, now);
    }
  }

  progress.finish();
  for (auto& s : slots_) s->agent->close_open_handshake();
  if (flush_logs) flush_logs();

  if (signal_fd >= 0) ::close(signal_fd);
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);

  FleetResult r;
  r.reason = reason_;
  r.duration_s = static_cast<double>(monotonic_ms() - start_ms_) / 1000.0;
  if (all_ready_ms_) r.connect_s = static_cast<double>(*all_ready_ms_ - start_ms_) / 1000.0;
  r.failures = failures_;
  r.drain_complete = context_.counters->packets_acked >= context_.counters->packets_sent;
  r.all_done = true;
  for (const auto& s : slots_) {
    if (agent_config_.mode == Mode::dsekp && !s->agent->ever_established()) ++r.never_established;
    if (!s->agent->done()) r.all_done = false;
  }
  return r;
}

}  // namespace dsekp::device
