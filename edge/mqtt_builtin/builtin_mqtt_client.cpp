// BuiltinMqttClient (see builtin_mqtt_client.hpp for what it keeps and why).
#include "edge/mqtt_builtin/builtin_mqtt_client.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>

#include "edge/logging/edge_logger.hpp"
#include "edge/mqtt_builtin/mqtt5_packets.hpp"

namespace dsekp::edge::mqtt_builtin {
namespace {

// Bytes asked of each read(2): many packets per system call.
constexpr std::size_t kReadChunk = 64 * 1024;
// The loop's wait for socket activity, ms: also the keep-alive check's resolution.
constexpr int kLoopTimeoutMs = 200;

// Under a backlog (the broker delivering faster than the edge handles messages one burst at a
// time) the loop would empty the socket, commit the few messages it found and be back before the
// next ones arrive: many small bursts, each paying a commit, a wake-up and a send, and the edge
// busy all the time. So after a burst of at least kBacklogBurst messages that ended because the
// socket was empty, the loop pauses kBacklogPauseNs (1 ms) before it reads again, and reads the
// messages that came meanwhile as one burst (a few hundred at 100,000 messages/s, up to batch_max).
// The pause happens once, right after such a burst, and ends early when another thread wakes the
// loop (a publish, stop()): a message after a quiet spell (the lighter loads, a lone handshake)
// is read at once, one that comes during the pause waits at most that long. Each
// burst's PUBACKs still go out only after its commit, before the pause. (The libmosquitto client
// has no such pause: its receive path costs more per message than the broker's sending, so its
// bursts fill batch_max anyway.)
constexpr std::size_t kBacklogBurst = 32;
constexpr long kBacklogPauseNs = 1'000'000;

// The pause above, or less if `wake_fd` becomes readable (left unread, for the loop's poll).
void backlog_pause(int wake_fd) noexcept {
  pollfd wake{wake_fd, POLLIN, 0};
  const timespec pause{0, kBacklogPauseNs};
  (void)::ppoll(&wake, 1, &pause, nullptr);
}

// How long a TCP connect, the CONNACK and a blocked write may take.
constexpr auto kNetworkTimeout = std::chrono::seconds(10);
// How long stop() lets the loop write the DISCONNECT and see the broker close.
constexpr auto kStopGrace = std::chrono::seconds(2);
// MQTT 5's own limit on a packet (2.1.4), for a broker that announces none.
constexpr std::uint32_t kProtocolMaximumPacket = 268'435'460;

int ms_until(std::chrono::steady_clock::time_point deadline) {
  const auto left =
      std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 60'000));
}

// The name of an MQTT 5 CONNACK or DISCONNECT reason code (2.4), for the log.
std::string reason_name(std::uint8_t code) {
  switch (code) {
    case 0x01:
      return "unacceptable protocol version (a broker of MQTT 3.1.1 only)";
    case 0x04:
      return "disconnect with will message";
    case 0x80:
      return "unspecified error";
    case 0x81:
      return "malformed packet";
    case 0x82:
      return "protocol error";
    case 0x84:
      return "unsupported protocol version";
    case 0x85:
      return "client identifier not valid";
    case 0x86:
      return "bad user name or password";
    case 0x87:
      return "not authorized";
    case 0x88:
      return "server unavailable";
    case 0x89:
      return "server busy";
    case 0x8A:
      return "banned";
    case 0x8B:
      return "server shutting down";
    case 0x8D:
      return "keep alive timeout";
    case 0x8E:
      return "session taken over";
    case 0x95:
      return "packet too large";
    case 0x97:
      return "quota exceeded";
    case 0x9C:
      return "use another server";
    case 0x9D:
      return "server moved";
    default:
      return "reason code " + std::to_string(code);
  }
}

// A TCP connection to host:port, non-blocking, or -1 with `why`.
int connect_tcp(const std::string& host, std::uint16_t port, const std::atomic<bool>& stopping,
                std::string& why) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
      rc != 0) {
    why = std::string("cannot resolve the host: ") + ::gai_strerror(rc);
    return -1;
  }
  int sock = -1;
  why = "no address";
  for (addrinfo* a = found; a != nullptr && sock < 0 && !stopping; a = a->ai_next) {
    sock = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (sock < 0) {
      why = std::strerror(errno);
      continue;
    }
    int rc = ::connect(sock, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{sock, POLLOUT, 0};
      const auto deadline = std::chrono::steady_clock::now() + kNetworkTimeout;
      while ((rc = ::poll(&p, 1, std::min(kLoopTimeoutMs, ms_until(deadline)))) == 0 && !stopping &&
             ms_until(deadline) > 0) {
      }
      int error = ETIMEDOUT;
      socklen_t size = sizeof error;
      if (rc > 0) (void)::getsockopt(sock, SOL_SOCKET, SO_ERROR, &error, &size);
      rc = error == 0 ? 0 : -1;
      errno = error;
    }
    if (rc != 0) {
      why = std::strerror(errno);
      ::close(sock);
      sock = -1;
    }
  }
  ::freeaddrinfo(found);
  if (sock < 0) return -1;
  // No Nagle: a burst's acknowledgements and its answers leave as one write already, and a
  // lone answer must not wait for the broker's delayed ACK.
  const int one = 1;
  (void)::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return sock;
}

ByteView as_bytes(const std::string& s) noexcept {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

}  // namespace

BuiltinMqttClient::BuiltinMqttClient(mqtt::MqttOptions options) : options_(std::move(options)) {
  if (options_.batch_max < 1) options_.batch_max = 1;
}

BuiltinMqttClient::~BuiltinMqttClient() {
  stop();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

bool BuiltinMqttClient::start(transport::TransportHandlers handlers, std::string& error) {
  if (ever_started_) {
    error = "the MQTT client was started before (a stopped client is not started again)";
    return false;
  }
  if (!handlers.message) {
    error = "the MQTT client needs a message handler";
    return false;
  }
  if (options_.version == mqtt::MqttVersion::v311) {
    error =
        "the built-in MQTT client speaks MQTT 5 only: use --mqtt-client libmosquitto for "
        "MQTT 3.1.1";
    return false;
  }
  if (options_.tls.requested()) {
    error =
        "the built-in MQTT client has no TLS: use --mqtt-client libmosquitto for TLS to the "
        "broker";
    return false;
  }
  const auto too_long = [](const std::string& s) { return s.size() > 65535; };
  if (options_.client_id.empty() || too_long(options_.client_id) || too_long(options_.username) ||
      too_long(options_.password) || too_long(options_.availability.topic) ||
      too_long(options_.availability.online) || too_long(options_.availability.offline) ||
      std::any_of(options_.subscriptions.begin(), options_.subscriptions.end(), too_long) ||
      std::any_of(options_.stale_subscriptions.begin(), options_.stale_subscriptions.end(),
                  too_long)) {
    error = "the MQTT client id is empty, or a client id, login or topic is over 65,535 bytes";
    return false;
  }
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) {
    error = "eventfd failed";
    return false;
  }
  handlers_ = std::move(handlers);
  stopping_ = false;
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error& e) {
    ::close(wake_fd_);
    wake_fd_ = -1;
    error = std::string("cannot start the MQTT thread: ") + e.what();
    return false;
  }
  started_ = true;
  ever_started_ = true;
  return true;
}

void BuiltinMqttClient::stop() noexcept {
  if (started_.exchange(false)) {
    {
      std::lock_guard lock(stop_mutex_);
      stopping_ = true;
    }
    stop_cv_.notify_all();
    wake();
  }
  // From a handler (the loop thread) the loop ends by itself after the handler returns; a later
  // stop() from the owner (or the destructor) joins it.
  if (std::this_thread::get_id() == loop_thread_.load() || !thread_.joinable()) return;
  thread_.join();
  connected_ = false;
  if (bursts_ > 0)
    logging::logger().info("{} messages in {} batches (mean {:.1f}, at most {})", messages_,
                           bursts_, static_cast<double>(messages_) / static_cast<double>(bursts_),
                           options_.batch_max);
}

bool BuiltinMqttClient::publish(const std::string& topic, ByteView payload, int qos, bool retain,
                                ByteView correlation_data) noexcept {
  // A topic name has no wildcards and no U+0000 (MQTT 5 3.3.2.1, 1.5.4).
  if (qos < 0 || qos > 1 || topic.empty() || topic.size() > 65535 ||
      topic.find_first_of(std::string_view("+#\0", 3)) != std::string::npos ||
      correlation_data.size() > 65535)
    return false;
  if (pending_.fetch_add(1) >= kMaxPending) {
    pending_.fetch_sub(1);
    return false;
  }
  try {
    Outgoing o;
    o.topic = topic;
    o.payload.assign(payload.begin(), payload.end());
    o.qos = static_cast<std::uint8_t>(qos);
    o.retain = retain;
    o.correlation_data.assign(correlation_data.begin(), correlation_data.end());
    std::lock_guard lock(queue_mutex_);
    queued_.push_back(std::move(o));
  } catch (...) {
    pending_.fetch_sub(1);
    return false;  // no memory
  }
  // From another thread the loop may be asleep in poll(): wake it to write the publish now.
  if (std::this_thread::get_id() != loop_thread_.load()) wake();
  return true;
}

void BuiltinMqttClient::wake() noexcept {
  if (wake_fd_ < 0) return;
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

void BuiltinMqttClient::pause(unsigned seconds) {
  std::unique_lock lock(stop_mutex_);
  stop_cv_.wait_for(lock, std::chrono::seconds(seconds), [this] { return stopping_.load(); });
}

void BuiltinMqttClient::run() {
  loop_thread_ = std::this_thread::get_id();
  unsigned delay = std::max(1u, options_.reconnect_min_s);
  bool reported = false;
  while (!stopping_) {
    std::string why;
    const int sock = connect_tcp(options_.host, options_.port, stopping_, why);
    if (sock >= 0) {
      const Ending ending = serve(sock);
      ::close(sock);
      connected_ = false;
      if (ending.accepted) {
        delay = std::max(1u, options_.reconnect_min_s);
        reported = false;
      }
      if (!stopping_ && ending.accepted) {
        logging::logger().warn("connection lost: {}; reconnecting", ending.why);
      } else if (!stopping_ && !reported) {
        logging::logger().warn("connection to {}:{} failed: {} (retrying)", options_.host,
                               options_.port, ending.why);
        reported = true;
      }
    } else if (!stopping_ && !reported) {
      logging::logger().warn("cannot connect to {}:{}: {} (retrying)", options_.host, options_.port,
                             why);
      reported = true;
    }
    if (stopping_) break;
    pause(delay);
    delay = std::min(delay * 2, std::max(delay, options_.reconnect_max_s));
  }
}

BuiltinMqttClient::Ending BuiltinMqttClient::serve(int sock) {
  Ending ending;
  in_.clear();
  out_.clear();
  ping_outstanding_ = false;
  backlog_ = false;
  if (!open_session(sock, ending.why)) return ending;
  ending.accepted = true;
  while (true) {
    // Packets already buffered (a burst cut by batch_max or batch_time, or what came with the
    // CONNACK) are handled without waiting, and so is a header already over the limit.
    RawPacket next;
    std::size_t size = 0;
    const bool buffered =
        next_packet(in_.pending(), receive_limit(), next, size) != Framing::need_more;
    if (!buffered && std::exchange(backlog_, false)) backlog_pause(wake_fd_);
    pollfd fds[2] = {{sock, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (::poll(fds, 2, buffered ? 0 : kLoopTimeoutMs) < 0 && errno != EINTR) {
      ending.why = std::string("poll: ") + std::strerror(errno);
      return ending;
    }
    if ((fds[1].revents & POLLIN) != 0) {
      std::uint64_t count = 0;
      (void)!::read(wake_fd_, &count, sizeof count);
    }
    if (stopping_) break;
    if (buffered || (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      handler_clock_.entered();
      const std::uint64_t before = messages_;
      const bool open = read_burst(sock, ending.why);
      handler_clock_.left();
      backlog_ = burst_drained_ && messages_ - before >= kBacklogBurst;
      if (!open) return ending;
    }
    // Only now, after the burst's end (its commit), may its PUBACKs and answers go out.
    take_queued_publishes();
    const auto now = Clock::now();
    if (keep_alive_.count() > 0 && !ping_outstanding_ &&
        (now - last_sent_ >= keep_alive_ || now - last_received_ >= keep_alive_)) {
      append_pingreq(out_);
      ping_outstanding_ = true;
    }
    if (!flush(sock, ending.why)) return ending;
    if (keep_alive_.count() > 0 && Clock::now() - last_received_ > keep_alive_ * 3 / 2) {
      ending.why = "no packet from the broker for one and a half keep-alive intervals";
      return ending;
    }
  }
  // stop(): the offline state ahead of a clean DISCONNECT (which discards the will); if it cannot
  // go out now (the broker's quota is full), the DISCONNECT asks for the will instead. Then wait
  // for the broker to close: closing at once could reset the connection and lose the PUBACKs
  // the broker has not read yet (it would send those messages again at the next connect).
  std::uint8_t reason = 0;
  if (const mqtt::MqttAvailability& a = options_.availability; !a.topic.empty()) {
    Outgoing offline;
    offline.topic = a.topic;
    offline.payload.assign(a.offline.begin(), a.offline.end());
    offline.retain = a.retain;
    const bool queued = broker_takes(offline) && publish(a.topic, as_bytes(a.offline), 1, a.retain);
    take_queued_publishes();
    if (!queued || !waiting_.empty()) reason = 0x04;  // disconnect with will message
  }
  append_disconnect(out_, reason);
  if (!flush(sock, ending.why)) return ending;
  ::shutdown(sock, SHUT_WR);
  const auto deadline = stop_by_ == Clock::time_point{} ? Clock::now() + kStopGrace : stop_by_;
  std::uint8_t sink[4096];
  for (pollfd p{sock, POLLIN, 0}; Clock::now() < deadline && ::poll(&p, 1, ms_until(deadline)) > 0;)
    if (::read(sock, sink, sizeof sink) <= 0) break;
  return ending;
}

bool BuiltinMqttClient::open_session(int sock, std::string& why) {
  ConnectRequest request;
  request.client_id = options_.client_id;
  request.username = options_.username;
  request.password = options_.password;
  request.keep_alive_s = static_cast<std::uint16_t>(std::clamp(options_.keepalive_s, 0, 65535));
  request.session_expiry_s = options_.session_expiry_s;
  request.receive_maximum = mqtt::receive_maximum_for(options_.batch_max);
  request.maximum_packet_size = options_.maximum_packet_size;
  const mqtt::MqttAvailability& a = options_.availability;
  request.will_topic = a.topic;
  request.will_payload = as_bytes(a.offline);
  request.will_retain = a.retain;
  {
    // A buffer of its own, wiped here: it holds the password.
    std::vector<std::uint8_t> connect;
    append_connect(connect, request);
    const bool sent = send_all(sock, connect, why);
    secure_wipe(connect);
    if (!sent) return false;
  }

  // The CONNACK: the first packet, small; anything else (or a header claiming more than this
  // client takes) ends the attempt before it is buffered.
  const auto deadline = Clock::now() + kNetworkTimeout;
  RawPacket packet;
  std::size_t size = 0;
  for (;;) {
    const ByteView pending = in_.pending();
    if (!pending.empty() && pending[0] != 0x20) {
      why = "the broker's first packet is not a CONNACK (3.2)";
      return false;
    }
    const Framing f = next_packet(pending, receive_limit(), packet, size);
    if (f == Framing::packet) break;
    if (f != Framing::need_more) {
      why = "a CONNACK over the Maximum Packet Size or with a malformed length";
      return false;
    }
    pollfd p{sock, POLLIN, 0};
    if (stopping_ || ::poll(&p, 1, std::min(kLoopTimeoutMs, ms_until(deadline))) < 0 ||
        ms_until(deadline) == 0) {
      why = "no CONNACK";
      return false;
    }
    if (p.revents == 0) continue;
    const MutableByteView room = in_.room(kReadChunk);
    const ssize_t n = ::read(sock, room.data(), room.size());
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
      why = "the broker closed the connection before its CONNACK";
      return false;
    }
    if (n > 0) in_.produced(static_cast<std::size_t>(n));
  }
  Connack connack;
  if (const char* problem = decode_connack(packet, connack); *problem != '\0') {
    why = problem;
    return false;
  }
  in_.consume(size);
  if (connack.reason != 0) {
    why = "the broker refused the connection: " + reason_name(connack.reason);
    if (!connack.reason_string.empty()) why += " (" + std::string(connack.reason_string) + ")";
    if (connack.reason == 0x01 || connack.reason == 0x84)
      why += "; the built-in MQTT client speaks MQTT 5 only (--mqtt-client libmosquitto)";
    logging::logger().error("{}", why);
    return false;
  }
  connected_ = true;
  broker_receive_maximum_ = connack.receive_maximum;
  broker_maximum_packet_size_ = connack.maximum_packet_size;
  broker_maximum_qos_ = connack.maximum_qos;
  broker_retain_available_ = connack.retain_available;
  keep_alive_ = std::chrono::seconds(connack.server_keep_alive >= 0 ? connack.server_keep_alive
                                                                    : request.keep_alive_s);
  last_received_ = Clock::now();
  // Lost between two connections of this process: what the broker held for the edge is gone.
  // (At start-up a new session is normal: the first start, or a session that expired.)
  if (!connack.session_present && std::exchange(accepted_before_, true))
    logging::logger().warn(
        "the broker kept no session for client id {}: what it held for the edge is gone, and "
        "the subscriptions are made again",
        options_.client_id);
  // Ours first, then theirs: unacknowledged publishes go again before anything new.
  send_in_flight_again(connack.session_present);
  unsubscribe_id_ = subscribe_id_ = 0;
  if (!options_.stale_subscriptions.empty()) {
    unsubscribe_id_ = next_packet_id();
    append_unsubscribe(out_, unsubscribe_id_, options_.stale_subscriptions);
  }
  if (!options_.subscriptions.empty()) {
    subscribe_id_ = next_packet_id();
    append_subscribe(out_, subscribe_id_, options_.subscriptions);
  }
  if (!a.topic.empty()) (void)publish(a.topic, as_bytes(a.online), 1, a.retain);
  logging::logger().info("connected to {}:{} (MQTT 5, built-in client)", options_.host,
                         options_.port);
  if (options_.subscriptions.empty() && handlers_.ready)
    transport::run_handler(options_.fatal, "ready", [this] { handlers_.ready(); });
  take_queued_publishes();
  return flush(sock, why);
}

bool BuiltinMqttClient::read_burst(int sock, std::string& why) {
  const auto started = Clock::now();
  const std::uint32_t limit = receive_limit();
  burst_cut_ = false;
  burst_drained_ = false;
  bool open = true;
  while (open) {
    std::size_t at = 0;
    while (!burst_cut_ && !stopping_) {
      RawPacket packet;
      std::size_t size = 0;
      const Framing f = next_packet(in_.pending().subspan(at), limit, packet, size);
      if (f == Framing::need_more) break;
      if (f != Framing::packet) {
        why = f == Framing::too_large ? "a packet over the Maximum Packet Size the client announced"
                                      : "a remaining length of more than four bytes (1.5.5)";
        append_disconnect(out_, f == Framing::too_large ? 0x95 : 0x81);
        open = false;
        break;
      }
      at += size;
      last_received_ = Clock::now();
      if (!handle_packet(packet.first, packet.body, why)) {
        open = false;
        break;
      }
      // A slow burst ends at batch_time also inside one read's messages, so that its PUBACKs
      // and the keep-alive are not held back by what is still buffered.
      if (in_burst_ && options_.batch_time.count() > 0 &&
          Clock::now() - started >= options_.batch_time) {
        end_burst();
        burst_cut_ = true;
      }
    }
    in_.consume(at);
    if (!open || burst_cut_ || stopping_) break;
    if (options_.batch_time.count() > 0 && Clock::now() - started >= options_.batch_time) break;
    const MutableByteView room = in_.room(kReadChunk);
    const ssize_t n = ::read(sock, room.data(), room.size());
    if (n > 0) {
      in_.produced(static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) {
      why = "the broker closed the connection";
      open = false;
    } else if (errno == EINTR) {
      continue;
    } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
      why = std::string("read: ") + std::strerror(errno);
      open = false;
    } else if (!wait_for_more(sock, started)) {
      burst_drained_ = true;
      break;
    }
  }
  // Also after a lost connection: what was handled is committed. Its PUBACKs go out only with a
  // DISCONNECT the client sends below, if at all; the broker sends the rest again (refused then
  // as replays).
  end_burst();
  if (!open) {
    // A DISCONNECT for a packet the client refused is worth one try; the connection ends anyway.
    std::string ignored;
    (void)flush(sock, ignored);
  }
  return open;
}

std::uint32_t BuiltinMqttClient::receive_limit() const noexcept {
  return options_.maximum_packet_size > 0 ? options_.maximum_packet_size : kProtocolMaximumPacket;
}

bool BuiltinMqttClient::handle_packet(std::uint8_t first, ByteView body, std::string& why) {
  const RawPacket packet{first, body};
  switch (packet.type()) {
    case PacketType::publish:
      return handle_publish(first, body, why);
    case PacketType::puback: {
      Ack ack;
      if (const char* problem = decode_ack(packet, ack); *problem != '\0') {
        why = problem;
        return false;
      }
      const auto it = std::find_if(in_flight_.begin(), in_flight_.end(), [&ack](const Outgoing& o) {
        return o.packet_id == ack.packet_id;
      });
      if (it == in_flight_.end()) return true;  // a PUBACK for a publish sent before a reconnect
      if (ack.reasons.front() >= 0x80)
        logging::logger().warn("the broker refused a publish to {}: {}", it->topic,
                               reason_name(ack.reasons.front()));
      in_flight_.erase(it);
      return true;
    }
    case PacketType::suback: {
      Ack ack;
      if (const char* problem = decode_ack(packet, ack); *problem != '\0') {
        why = problem;
        return false;
      }
      if (ack.packet_id != subscribe_id_ || subscribe_id_ == 0) return true;
      subscribe_id_ = 0;
      if (ack.reasons.size() != options_.subscriptions.size()) {
        why = "a SUBACK with another number of reason codes than topic filters (3.9.3)";
        return false;
      }
      // QoS 1 or nothing: a filter granted at QoS 0 would deliver messages that are neither
      // acknowledged nor sent again, so a crash before their commit would lose them.
      for (std::size_t i = 0; i < ack.reasons.size(); ++i)
        if (ack.reasons[i] != 1)
          logging::logger().error("the broker {} the subscription {}",
                                  ack.reasons[i] == 0 ? "granted only QoS 0 to" : "refused",
                                  options_.subscriptions[i]);
      logging::logger().info("ready (subscribed to {} topics)", ack.reasons.size());
      if (handlers_.ready)
        transport::run_handler(options_.fatal, "ready", [this] { handlers_.ready(); });
      return true;
    }
    case PacketType::unsuback:
      unsubscribe_id_ = 0;  // its id is free again
      return true;
    case PacketType::pingresp:
      ping_outstanding_ = false;
      return true;
    case PacketType::disconnect: {
      Disconnect d;
      if (const char* problem = decode_disconnect(packet, d); *problem != '\0') {
        why = problem;
        return false;
      }
      why = "the broker disconnected: " + reason_name(d.reason);
      if (d.reason == 0x8E)
        why += " (another client connected as client id " + options_.client_id + ")";
      if (!d.reason_string.empty()) why += " (" + std::string(d.reason_string) + ")";
      return false;
    }
    default:
      why = "a packet of type " + std::to_string(first >> 4) +
            " that a broker does not send "
            "to this client";
      return false;
  }
}

bool BuiltinMqttClient::handle_publish(std::uint8_t first, ByteView body, std::string& why) {
  Publish publish;
  if (const char* problem = decode_publish({first, body}, publish); *problem != '\0') {
    why = problem;
    append_disconnect(out_, 0x81);
    return false;
  }
  if (publish.qos == 2) {
    why = "a QoS 2 PUBLISH (the client subscribes at QoS 1 only)";
    append_disconnect(out_, 0x82);
    return false;
  }
  if (!in_burst_) {
    in_burst_ = true;
    burst_count_ = 0;
  }
  transport::MessageProperties properties;
  properties.retained = publish.retain;
  properties.response_topic = publish.response_topic;
  properties.correlation_data = publish.correlation_data;
  transport::run_handler(options_.fatal, "message", [&] {
    if (handlers_.message(publish.topic, publish.payload, properties) ==
        transport::BurstWait::answer_pending)
      answer_pending_ = true;
  });
  // Queued, not written: out_ goes to the socket only after the burst's end.
  if (publish.qos == 1) append_puback(out_, publish.packet_id);
  if (++burst_count_ >= options_.batch_max) {
    end_burst();
    burst_cut_ = true;
  }
  return true;
}

void BuiltinMqttClient::end_burst() {
  if (!in_burst_) return;
  in_burst_ = false;
  answer_pending_ = false;
  ++bursts_;
  messages_ += burst_count_;
  burst_count_ = 0;
  if (handlers_.burst_end)
    transport::run_handler(options_.fatal, "batch end", [this] { handlers_.burst_end(); });
}

// The batch wait (MqttOptions::batch_wait; the libmosquitto client's has the same rules): an
// open burst nobody waits for stays open until a message comes or the wait, counted from the
// burst's start and never longer than batch_time, runs out; it ends early when another thread
// wakes the loop, and once the burst holds kBatchWaitMessages.
bool BuiltinMqttClient::wait_for_more(int sock, Clock::time_point started) {
  if (!in_burst_ || answer_pending_ || options_.batch_wait.count() <= 0 || stopping_ ||
      burst_count_ >= mqtt::kBatchWaitMessages)
    return false;
  auto limit = options_.batch_wait;
  if (options_.batch_time.count() > 0) limit = std::min(limit, options_.batch_time);
  const auto left_ms = ms_until(started + limit);
  if (left_ms <= 0) return false;
  pollfd fds[2] = {{sock, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  if (::poll(fds, 2, left_ms) <= 0) return false;
  return (fds[1].revents & POLLIN) == 0;  // the loop's next poll reads the wake-up
}

std::uint16_t BuiltinMqttClient::next_packet_id() {
  // Ids in use are skipped: at most kMaxInFlight publishes and two subscription requests hold
  // one, so a free id is always found.
  const auto holds = [](std::uint16_t id) {
    return [id](const Outgoing& o) { return o.packet_id == id; };
  };
  const auto in_use = [&](std::uint16_t id) {
    return id == 0 || id == subscribe_id_ || id == unsubscribe_id_ ||
           std::any_of(in_flight_.begin(), in_flight_.end(), holds(id)) ||
           std::any_of(waiting_.begin(), waiting_.end(), holds(id));  // resends keep theirs
  };
  do {
    last_packet_id_ = static_cast<std::uint16_t>(last_packet_id_ + 1);
  } while (in_use(last_packet_id_));
  return last_packet_id_;
}

// After a reconnect the unacknowledged publishes go first, in order, through the same checks and
// quota as new ones: with their ids and DUP if the broker kept the session (MQTT 5 4.4), as new
// publishes if it did not.
void BuiltinMqttClient::send_in_flight_again(bool session_present) {
  while (!in_flight_.empty()) {
    waiting_.push_front(std::move(in_flight_.back()));
    in_flight_.pop_back();
    waiting_.front().dup = true;
  }
  // A new session knows none of the ids, also not those of resends still waiting from before.
  if (!session_present)
    for (Outgoing& o : waiting_) {
      o.packet_id = 0;
      o.dup = false;
    }
}

bool BuiltinMqttClient::broker_takes(const Outgoing& o) {
  const std::uint32_t limit =
      broker_maximum_packet_size_ > 0 ? broker_maximum_packet_size_ : kProtocolMaximumPacket;
  const char* why = nullptr;
  if (publish_size(o.topic, o.payload, o.qos, o.correlation_data) > limit)
    why = "it is over the broker's Maximum Packet Size";
  else if (o.qos > broker_maximum_qos_)
    why = "the broker takes only QoS 0";
  else if (o.retain && !broker_retain_available_)
    why = "the broker keeps no retained messages";
  else if (o.sends >= kMaxSends)
    why = "it went to that many connections without a PUBACK";
  if (why == nullptr) return true;
  logging::logger().error("a publish to {} is dropped: {}", o.topic, why);
  return false;
}

void BuiltinMqttClient::take_queued_publishes() {
  if (!connected_) return;
  {
    std::lock_guard lock(queue_mutex_);
    while (!queued_.empty()) {
      waiting_.push_back(std::move(queued_.front()));
      queued_.pop_front();
    }
  }
  const std::size_t quota = std::min<std::size_t>(broker_receive_maximum_, kMaxInFlight);
  while (!waiting_.empty()) {
    Outgoing& o = waiting_.front();
    if (o.qos == 1 && in_flight_.size() >= quota) return;
    // pending_ counts publishes until their first write (resends are bounded by kMaxInFlight).
    if (o.sends == 0) pending_.fetch_sub(1);
    if (broker_takes(o)) {
      if (o.qos == 1 && o.packet_id == 0) o.packet_id = next_packet_id();
      append_publish(out_, o.topic, o.payload, o.qos, o.retain, o.dup, o.packet_id,
                     o.correlation_data);
      ++o.sends;
      if (o.qos == 1) in_flight_.push_back(std::move(o));
    }
    waiting_.pop_front();
  }
}

bool BuiltinMqttClient::send_all(int sock, ByteView bytes, std::string& why) {
  std::size_t done = 0;
  // The deadline is for progress: a slow link that keeps taking bytes is not given up on, except
  // once stop() was called, which kStopGrace bounds.
  auto deadline = Clock::now() + kNetworkTimeout;
  while (done < bytes.size()) {
    if (stopping_) {
      if (stop_by_ == Clock::time_point{}) stop_by_ = Clock::now() + kStopGrace;
      deadline = std::min(deadline, stop_by_);
    }
    const ssize_t n = ::send(sock, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      deadline = Clock::now() + kNetworkTimeout;
      continue;
    }
    if (ms_until(deadline) == 0) break;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      pollfd p{sock, POLLOUT, 0};
      (void)::poll(&p, 1, std::min(kLoopTimeoutMs, ms_until(deadline)));
      continue;
    }
    why = std::string("send: ") + std::strerror(errno);
    return false;
  }
  if (done < bytes.size()) {
    why = "send: the broker did not take it before the deadline";
    return false;
  }
  if (done > 0) last_sent_ = Clock::now();
  return true;
}

bool BuiltinMqttClient::flush(int sock, std::string& why) {
  const bool sent = send_all(sock, out_, why);
  out_.clear();
  return sent;
}

}  // namespace dsekp::edge::mqtt_builtin
