// The uplink from a RabbitMQ queue over AMQP 0-9-1 (see amqp_transport.hpp).
#include "edge/amqp/amqp_transport.hpp"

#include <amqp_tcp_socket.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>
#include <system_error>
#include <utility>

#include "edge/logging/edge_logger.hpp"

namespace dsekp::edge::amqp {
namespace {

// The one channel the edge uses, for consuming and publishing.
constexpr amqp_channel_t kChannel = 1;
// The loop's wait for socket activity, ms: also how often heartbeats are looked after.
constexpr int kLoopTimeoutMs = 200;
// How long a TCP connect and each set-up request may take.
constexpr timeval kNetworkTimeout{10, 0};
// How long stop() waits for the confirms of the last publishes, and then for the goodbye.
constexpr auto kStopGrace = std::chrono::seconds(2);
constexpr timeval kGoodbyeTimeout{1, 0};
// A connection lost sooner than this after it opened counts as a failed one (so that a broker
// that closes every connection at once, e.g. for a refused publish, is retried with backoff).
constexpr auto kShortLived = std::chrono::seconds(2);
// A publish sent on this many connections without a confirm, or refused this many times, is
// dropped (with an error), so that no single publish keeps every connection failing.
constexpr unsigned kMaxSends = 3;
// AMQP's largest frame the edge asks for (RabbitMQ's default).
constexpr int kFrameMax = 131072;

std::string_view view_of(amqp_bytes_t b) noexcept {
  return {static_cast<const char*>(b.bytes), b.len};
}

amqp_bytes_t bytes_of(const std::string& s) noexcept {
  return {s.size(), const_cast<char*>(s.data())};
}

std::string describe(const amqp_rpc_reply_t& r) {
  switch (r.reply_type) {
    case AMQP_RESPONSE_NORMAL:
      return "ok";
    case AMQP_RESPONSE_NONE:
      return "no reply";
    case AMQP_RESPONSE_LIBRARY_EXCEPTION:
      return amqp_error_string2(r.library_error);
    case AMQP_RESPONSE_SERVER_EXCEPTION:
      if (r.reply.id == AMQP_CONNECTION_CLOSE_METHOD) {
        const auto* m = static_cast<const amqp_connection_close_t*>(r.reply.decoded);
        return "the broker closed the connection: " + std::to_string(m->reply_code) + " " +
               std::string(view_of(m->reply_text));
      }
      if (r.reply.id == AMQP_CHANNEL_CLOSE_METHOD) {
        const auto* m = static_cast<const amqp_channel_close_t*>(r.reply.decoded);
        return "the broker closed the channel: " + std::to_string(m->reply_code) + " " +
               std::string(view_of(m->reply_text));
      }
      return "an unexpected answer from the broker";
  }
  return "?";
}

bool succeeded(amqp_connection_state_t conn, const char* what, std::string& why) {
  const amqp_rpc_reply_t r = amqp_get_rpc_reply(conn);
  if (r.reply_type == AMQP_RESPONSE_NORMAL) return true;
  why = std::string(what) + ": " + describe(r);
  return false;
}

}  // namespace

AmqpTransport::AmqpTransport(AmqpOptions options) : options_(std::move(options)) {}

AmqpTransport::~AmqpTransport() {
  stop();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

bool AmqpTransport::start(transport::TransportHandlers handlers, std::string& error) {
  if (ever_started_) {
    error = "the AMQP transport was started before (a stopped one is not started again)";
    return false;
  }
  if (!handlers.message) {
    error = "the AMQP transport needs a message handler";
    return false;
  }
  options_.batch_max = std::max<std::size_t>(options_.batch_max, 1);
  if (options_.nodes.empty() || options_.queue.empty() || options_.subscriptions.empty()) {
    error = "the AMQP transport needs a node, a queue name and the topics to bind";
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
    error = std::string("cannot start the AMQP thread: ") + e.what();
    return false;
  }
  started_ = true;
  ever_started_ = true;
  return true;
}

void AmqpTransport::stop() noexcept {
  if (started_.exchange(false)) {
    {
      std::lock_guard lock(stop_mutex_);
      stopping_ = true;
    }
    stop_cv_.notify_all();
    wake();
  }
  if (std::this_thread::get_id() == loop_thread_.load() || !thread_.joinable()) return;
  thread_.join();
  connected_ = false;
  if (bursts_ > 0)
    logging::logger().info("{} messages in {} batches (mean {:.1f}, at most {})", messages_,
                           bursts_, static_cast<double>(messages_) / static_cast<double>(bursts_),
                           options_.batch_max);
}

bool AmqpTransport::publish(const std::string& topic, ByteView payload, int qos, bool retain,
                            ByteView correlation_data) noexcept {
  // An MQTT topic name (no wildcards, no U+0000); nothing AMQP cannot carry to an MQTT
  // subscriber (a retained message, MQTT 5 correlation data).
  if (qos < 0 || qos > 1 || retain || !correlation_data.empty() || topic.empty() ||
      topic.size() > 255 || topic.find_first_of(std::string_view("+#\0", 3)) != std::string::npos)
    return false;
  if (pending_.fetch_add(1) >= kMaxPending) {
    pending_.fetch_sub(1);
    return false;
  }
  try {
    Outgoing o;
    o.routing_key = routing_key_of_topic(topic);
    o.payload.assign(payload.begin(), payload.end());
    o.qos = static_cast<std::uint8_t>(qos);
    std::lock_guard lock(queue_mutex_);
    queued_.push_back(std::move(o));
  } catch (...) {
    pending_.fetch_sub(1);
    return false;
  }
  if (std::this_thread::get_id() != loop_thread_.load()) wake();
  return true;
}

void AmqpTransport::wake() noexcept {
  if (wake_fd_ < 0) return;
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

void AmqpTransport::pause(unsigned seconds) {
  std::unique_lock lock(stop_mutex_);
  stop_cv_.wait_for(lock, std::chrono::seconds(seconds), [this] { return stopping_.load(); });
}

void AmqpTransport::run() {
  loop_thread_ = std::this_thread::get_id();
  const std::size_t n = options_.nodes.size();
  std::size_t next = 0;
  std::size_t failed_in_a_row = 0;
  unsigned delay = 1;
  while (!stopping_) {
    const AmqpNode& node = options_.nodes[next % n];
    bool opened = false;
    std::string why;
    const auto began = std::chrono::steady_clock::now();
    const bool clean = serve(node, opened, why);
    connected_ = false;
    // A clean stop says goodbye; a failed connection is only dropped (a frozen node would hold
    // the goodbye for the request timeout).
    close_connection(clean && stopping_);
    if (stopping_ && clean) break;
    // What the broker did not confirm goes again, first, on the next connection.
    waiting_.insert(waiting_.begin(), std::make_move_iterator(unconfirmed_.begin()),
                    std::make_move_iterator(unconfirmed_.end()));
    unconfirmed_.clear();
    publish_seq_ = 0;
    blocked_ = false;
    if (stopping_) break;
    ++next;
    if (opened) {
      logging::logger().warn("AMQP connection to {}:{} lost: {}; trying {}:{}", node.host,
                             node.port, why, options_.nodes[next % n].host,
                             options_.nodes[next % n].port);
      if (std::chrono::steady_clock::now() - began >= kShortLived) {
        failed_in_a_row = 0;
        delay = 1;
        continue;
      }
    } else {
      logging::logger().warn("AMQP: cannot use {}:{}: {}", node.host, node.port, why);
    }
    // After every node failed once, wait before the next round, longer each time.
    if (++failed_in_a_row % n == 0) {
      pause(delay);
      delay = std::min(delay * 2, std::max(delay, options_.reconnect_max_s));
    }
  }
}

bool AmqpTransport::declare_queue(std::string& why) {
  // A quorum queue: replicated on a majority of the nodes, so it outlives any one of them.
  amqp_table_entry_t type;
  type.key = amqp_cstring_bytes("x-queue-type");
  type.value.kind = AMQP_FIELD_KIND_UTF8;
  type.value.value.bytes = amqp_cstring_bytes("quorum");
  const amqp_table_t arguments{1, &type};
  amqp_queue_declare(conn_, kChannel, bytes_of(options_.queue), 0, 1, 0, 0, arguments);
  if (!succeeded(conn_, ("declare the queue " + options_.queue).c_str(), why)) return false;
  for (const std::string& filter : options_.subscriptions) {
    if (stopping_) {
      why = "stopping";
      return false;
    }
    const std::string key = binding_key_of_filter(filter);
    amqp_queue_bind(conn_, kChannel, bytes_of(options_.queue), bytes_of(options_.exchange),
                    bytes_of(key), amqp_empty_table);
    if (!succeeded(conn_, ("bind " + key).c_str(), why)) return false;
  }
  // A durable queue keeps the bindings of an earlier configuration (the PSK topic of an edge
  // that served the baseline): removed, so that nothing is queued for nobody.
  for (const std::string& filter : options_.stale_subscriptions) {
    if (stopping_) {
      why = "stopping";
      return false;
    }
    const std::string key = binding_key_of_filter(filter);
    amqp_queue_unbind(conn_, kChannel, bytes_of(options_.queue), bytes_of(options_.exchange),
                      bytes_of(key), amqp_empty_table);
    if (!succeeded(conn_, ("unbind " + key).c_str(), why)) return false;
  }
  return true;
}

bool AmqpTransport::open(const AmqpNode& node, std::string& why) {
  conn_ = amqp_new_connection();
  if (conn_ == nullptr) {
    why = "no memory for a connection";
    return false;
  }
  amqp_socket_t* socket = amqp_tcp_socket_new(conn_);
  if (socket == nullptr) {
    why = "no memory for a socket";
    return false;
  }
  if (const int rc =
          amqp_socket_open_noblock(socket, node.host.c_str(), node.port, &kNetworkTimeout);
      rc != AMQP_STATUS_OK) {
    why = std::string("connect: ") + amqp_error_string2(rc);
    return false;
  }
  if (amqp_set_rpc_timeout(conn_, &kNetworkTimeout) != AMQP_STATUS_OK) {
    why = "cannot set the request timeout";
    return false;
  }
  // Capabilities: without consumer_cancel_notify RabbitMQ drops the consumer of a deleted queue
  // silently (the edge would consume nothing while connected); with connection.blocked it says
  // when a resource alarm would stop reading a publishing connection (send_publishes waits then,
  // so that the bursts' acknowledgements are still read).
  amqp_table_entry_t capability[2];
  capability[0].key = amqp_cstring_bytes("consumer_cancel_notify");
  capability[0].value.kind = AMQP_FIELD_KIND_BOOLEAN;
  capability[0].value.value.boolean = 1;
  capability[1].key = amqp_cstring_bytes("connection.blocked");
  capability[1].value.kind = AMQP_FIELD_KIND_BOOLEAN;
  capability[1].value.value.boolean = 1;
  amqp_table_entry_t client_property;
  client_property.key = amqp_cstring_bytes("capabilities");
  client_property.value.kind = AMQP_FIELD_KIND_TABLE;
  client_property.value.value.table = amqp_table_t{2, capability};
  const amqp_table_t client_properties{1, &client_property};
  const amqp_rpc_reply_t login = amqp_login_with_properties(
      conn_, options_.vhost.c_str(), 1, kFrameMax, static_cast<int>(options_.heartbeat_s),
      &client_properties, AMQP_SASL_METHOD_PLAIN, options_.username.c_str(),
      options_.password.c_str());
  if (login.reply_type != AMQP_RESPONSE_NORMAL) {
    why = "login as " + options_.username + ": " + describe(login);
    return false;
  }
  amqp_channel_open(conn_, kChannel);
  if (!succeeded(conn_, "channel.open", why)) return false;
  const auto stopping = [&] {
    if (stopping_) why = "stopping";
    return stopping_.load();
  };
  if (stopping()) return false;
  // The queue and its bindings are set up once per process (declared on the first connection,
  // again after a consume that failed): on a reconnect, a cluster that cannot change its metadata
  // just then (a frozen node still counted as a member) must not hold the consumer back.
  if (!queue_ready_ && !declare_queue(why)) return false;
  if (stopping()) return false;
  const auto prefetch =
      static_cast<std::uint16_t>(std::min<std::size_t>(options_.batch_max * 2, 65535));
  amqp_basic_qos(conn_, kChannel, 0, prefetch, 0);
  if (!succeeded(conn_, "basic.qos", why)) return false;
  amqp_confirm_select(conn_, kChannel);
  if (!succeeded(conn_, "confirm.select", why)) return false;
  amqp_basic_consume(conn_, kChannel, bytes_of(options_.queue), amqp_empty_bytes, 0, 0, 0,
                     amqp_empty_table);
  const amqp_rpc_reply_t consumed = amqp_get_rpc_reply(conn_);
  if (consumed.reply_type == AMQP_RESPONSE_NORMAL) {
    queue_ready_ = true;
    return true;
  }
  why = "basic.consume: " + describe(consumed);
  // Refused by the broker (the queue deleted meanwhile): declared again on the next connection.
  // A request that timed out (no queue leader just then) is only retried.
  if (consumed.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION) queue_ready_ = false;
  return false;
}

bool AmqpTransport::serve(const AmqpNode& node, bool& opened, std::string& why) {
  if (!open(node, why)) return false;
  opened = true;
  connected_ = true;
  logging::logger().info("AMQP: connected to {}:{}, consuming {}", node.host, node.port,
                         options_.queue);
  if (handlers_.ready)
    transport::run_handler(options_.fatal, "ready", [this] { handlers_.ready(); });
  const int sock = amqp_get_sockfd(conn_);
  while (!stopping_) {
    if (!amqp_frames_enqueued(conn_) && !amqp_data_in_buffer(conn_)) {
      pollfd fds[2] = {{sock, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
      (void)::poll(fds, 2, kLoopTimeoutMs);
      if ((fds[1].revents & POLLIN) != 0) {
        std::uint64_t count = 0;
        (void)!::read(wake_fd_, &count, sizeof count);
      }
    }
    if (stopping_) break;
    if (!read_burst(why)) return false;
    // Only now, after the burst's end (its commit) and its acknowledgement.
    if (!send_publishes(why)) return false;
  }
  // Stopping: the last publishes, and their confirms for a moment (what is not confirmed is
  // lost with the process; a device asks again).
  if (!send_publishes(why)) return false;
  const auto deadline = std::chrono::steady_clock::now() + kStopGrace;
  while (!unconfirmed_.empty() && std::chrono::steady_clock::now() < deadline) {
    amqp_frame_t frame;
    timeval wait{0, 100'000};
    const int rc = amqp_simple_wait_frame_noblock(conn_, &frame, &wait);
    if (rc == AMQP_STATUS_TIMEOUT) continue;
    if (rc != AMQP_STATUS_OK || frame.frame_type != AMQP_FRAME_METHOD) break;
    if (frame.payload.method.id == AMQP_BASIC_ACK_METHOD) {
      const auto* ack = static_cast<const amqp_basic_ack_t*>(frame.payload.method.decoded);
      confirmed(ack->delivery_tag, ack->multiple != 0, false);
    }
  }
  return true;
}

bool AmqpTransport::read_burst(std::string& why) {
  const auto started = std::chrono::steady_clock::now();
  std::size_t count = 0;
  std::uint64_t last_tag = 0;
  bool ok = true;
  while (count < options_.batch_max && !stopping_) {
    amqp_maybe_release_buffers(conn_);
    amqp_frame_t frame;
    // One microsecond, not zero: librabbitmq (0.11) reports a missed heartbeat only when its
    // heartbeat deadline comes before the wait's, and a zero wait always comes first, so a frozen
    // broker would never be noticed. Its poll rounds the microsecond down to no wait at all.
    const timeval no_wait{0, 1};
    const int rc = amqp_simple_wait_frame_noblock(conn_, &frame, &no_wait);
    if (rc == AMQP_STATUS_TIMEOUT) break;
    if (rc != AMQP_STATUS_OK) {
      why = amqp_error_string2(rc);
      ok = false;
      break;
    }
    if (frame.frame_type != AMQP_FRAME_METHOD ||
        frame.payload.method.id != AMQP_BASIC_DELIVER_METHOD) {
      if (handle_other_frame(frame, why)) continue;
      ok = false;
      break;
    }
    const auto* deliver = static_cast<const amqp_basic_deliver_t*>(frame.payload.method.decoded);
    const std::uint64_t tag = deliver->delivery_tag;
    const std::string topic = topic_of_routing_key(view_of(deliver->routing_key));
    if (!read_content(why)) {
      ok = false;
      break;
    }
    handler_clock_.entered();
    transport::run_handler(options_.fatal, "message", [&] {
      (void)handlers_.message(topic, ByteView(body_.data(), body_.size()),
                              transport::MessageProperties{});
    });
    handler_clock_.left();
    last_tag = tag;
    ++count;
    if (options_.batch_time.count() > 0 &&
        std::chrono::steady_clock::now() - started >= options_.batch_time)
      break;
  }
  if (count > 0) {
    ++bursts_;
    messages_ += count;
    handler_clock_.entered();
    if (handlers_.burst_end)
      transport::run_handler(options_.fatal, "batch end", [this] { handlers_.burst_end(); });
    handler_clock_.left();
    // One acknowledgement for the whole burst, and only on the connection it came on: after a
    // lost connection the broker delivers it again (refused then as replays).
    if (ok) {
      if (const int rc = amqp_basic_ack(conn_, kChannel, last_tag, 1); rc != AMQP_STATUS_OK) {
        why = std::string("basic.ack: ") + amqp_error_string2(rc);
        ok = false;
      }
    }
  }
  return ok;
}

bool AmqpTransport::read_content(std::string& why) {
  // The header and body frames follow their delivery on its channel with nothing between them
  // (AMQP 0-9-1 4.2.6); this connection has one channel.
  amqp_frame_t frame;
  if (const int rc = amqp_simple_wait_frame(conn_, &frame); rc != AMQP_STATUS_OK) {
    why = amqp_error_string2(rc);
    return false;
  }
  if (frame.frame_type != AMQP_FRAME_HEADER) {
    why = "a delivery without its content header";
    return false;
  }
  const std::uint64_t size = frame.payload.properties.body_size;
  const std::size_t keep =
      static_cast<std::size_t>(std::min<std::uint64_t>(size, kMaxKeptBody + 1));
  body_.clear();
  std::uint64_t received = 0;
  while (received < size) {
    amqp_maybe_release_buffers_on_channel(conn_, kChannel);
    if (const int rc = amqp_simple_wait_frame(conn_, &frame); rc != AMQP_STATUS_OK) {
      why = amqp_error_string2(rc);
      return false;
    }
    if (frame.frame_type != AMQP_FRAME_BODY) {
      why = "a delivery's content cut short";
      return false;
    }
    const amqp_bytes_t part = frame.payload.body_fragment;
    received += part.len;
    const std::size_t take = std::min(part.len, keep - std::min(keep, body_.size()));
    const auto* bytes = static_cast<const std::uint8_t*>(part.bytes);
    body_.insert(body_.end(), bytes, bytes + take);
  }
  if (received != size) {
    why = "a delivery's content longer than its header said";
    return false;
  }
  return true;
}

bool AmqpTransport::handle_other_frame(const amqp_frame_t& frame, std::string& why) {
  if (frame.frame_type == AMQP_FRAME_HEARTBEAT) return true;
  // A content frame here would be a message half read.
  if (frame.frame_type != AMQP_FRAME_METHOD) {
    why = "a content frame out of place from the broker";
    return false;
  }
  switch (frame.payload.method.id) {
    case AMQP_CONNECTION_BLOCKED_METHOD:
      logging::logger().warn("AMQP: the broker has a resource alarm; publishes wait");
      blocked_ = true;
      return true;
    case AMQP_CONNECTION_UNBLOCKED_METHOD:
      logging::logger().info("AMQP: the broker's resource alarm ended");
      blocked_ = false;
      return true;
    case AMQP_BASIC_ACK_METHOD: {
      const auto* ack = static_cast<const amqp_basic_ack_t*>(frame.payload.method.decoded);
      confirmed(ack->delivery_tag, ack->multiple != 0, false);
      return true;
    }
    case AMQP_BASIC_NACK_METHOD: {
      const auto* nack = static_cast<const amqp_basic_nack_t*>(frame.payload.method.decoded);
      confirmed(nack->delivery_tag, nack->multiple != 0, true);
      return true;
    }
    case AMQP_BASIC_RETURN_METHOD:
      // Not asked for (no publish is mandatory); its content is read and dropped.
      return read_content(why);
    case AMQP_BASIC_CANCEL_METHOD:
      why = "the broker cancelled the consumer (the queue was deleted?)";
      return false;
    case AMQP_CHANNEL_CLOSE_METHOD: {
      const auto* m = static_cast<const amqp_channel_close_t*>(frame.payload.method.decoded);
      why = "the broker closed the channel: " + std::to_string(m->reply_code) + " " +
            std::string(view_of(m->reply_text));
      amqp_channel_close_ok_t close_ok{};
      (void)amqp_send_method(conn_, frame.channel, AMQP_CHANNEL_CLOSE_OK_METHOD, &close_ok);
      return false;
    }
    case AMQP_CONNECTION_CLOSE_METHOD: {
      const auto* m = static_cast<const amqp_connection_close_t*>(frame.payload.method.decoded);
      why = "the broker closed the connection: " + std::to_string(m->reply_code) + " " +
            std::string(view_of(m->reply_text));
      amqp_connection_close_ok_t close_ok{};
      (void)amqp_send_method(conn_, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &close_ok);
      return false;
    }
    default:
      return true;
  }
}

void AmqpTransport::confirmed(std::uint64_t tag, bool multiple, bool negative) {
  const auto covered = [tag, multiple](const Outgoing& o) {
    return multiple ? o.confirm_tag <= tag : o.confirm_tag == tag;
  };
  std::size_t done = 0;
  for (auto it = unconfirmed_.begin(); it != unconfirmed_.end();) {
    if (!covered(*it)) {
      ++it;
      continue;
    }
    if (negative) {
      // The broker could not take it (e.g. no quorum just then): it goes again, a few times.
      logging::logger().warn("AMQP: the broker refused a publish to {}; sending it again",
                             topic_of_routing_key(it->routing_key));
      waiting_.push_back(std::move(*it));
    } else {
      ++done;
    }
    it = unconfirmed_.erase(it);
  }
  pending_.fetch_sub(done);
}

bool AmqpTransport::send_publishes(std::string& why) {
  {
    std::lock_guard lock(queue_mutex_);
    while (!queued_.empty()) {
      waiting_.push_back(std::move(queued_.front()));
      queued_.pop_front();
    }
  }
  while (!waiting_.empty() && !blocked_) {
    Outgoing& o = waiting_.front();
    if (o.sends >= kMaxSends) {
      logging::logger().error("AMQP: a publish to {} is dropped: sent {} times without a confirm",
                              topic_of_routing_key(o.routing_key), o.sends);
      waiting_.pop_front();
      pending_.fetch_sub(1);
      continue;
    }
    // Persistent, and marked with the MQTT QoS RabbitMQ's MQTT plugin delivers it at. The
    // plugin matches the header as a signed byte: any other type (an unsigned byte, too) makes
    // every MQTT connection it is delivered to crash, again at each reconnect.
    amqp_table_entry_t qos;
    qos.key = amqp_cstring_bytes("x-mqtt-publish-qos");
    qos.value.kind = AMQP_FIELD_KIND_I8;
    qos.value.value.i8 = static_cast<std::int8_t>(o.qos);
    amqp_basic_properties_t properties{};
    properties._flags = AMQP_BASIC_DELIVERY_MODE_FLAG | AMQP_BASIC_HEADERS_FLAG;
    properties.delivery_mode = o.qos == 1 ? AMQP_DELIVERY_PERSISTENT : AMQP_DELIVERY_NONPERSISTENT;
    properties.headers = amqp_table_t{1, &qos};
    const amqp_bytes_t body{o.payload.size(), o.payload.data()};
    if (const int rc = amqp_basic_publish(conn_, kChannel, bytes_of(options_.exchange),
                                          bytes_of(o.routing_key), 0, 0, &properties, body);
        rc != AMQP_STATUS_OK) {
      why = std::string("basic.publish: ") + amqp_error_string2(rc);
      return false;
    }
    o.confirm_tag = ++publish_seq_;
    ++o.sends;
    unconfirmed_.push_back(std::move(o));
    waiting_.pop_front();
  }
  return true;
}

void AmqpTransport::close_connection(bool graceful) noexcept {
  if (conn_ == nullptr) return;
  if (graceful) {
    // connection.close ends the channel too; a broker that does not answer within the timeout
    // is left (stop() returns within a few seconds).
    (void)amqp_set_rpc_timeout(conn_, &kGoodbyeTimeout);
    (void)amqp_connection_close(conn_, AMQP_REPLY_SUCCESS);
  }
  (void)amqp_destroy_connection(conn_);
  conn_ = nullptr;
}

}  // namespace dsekp::edge::amqp
