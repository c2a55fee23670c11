// ChunkedSubscriber (see chunked_subscriber.hpp). The MQTT 5 packets it writes and reads are
// the few a subscriber needs (OASIS MQTT 5.0, section 3): CONNECT, SUBSCRIBE, PUBACK and
// DISCONNECT out; CONNACK, SUBACK and PUBLISH in.
#include "bench/edge/chunked_subscriber.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "bench/edge/bench_process.hpp"
#include "edge/daemon/unix_clock.hpp"

namespace dsekp::bench::edge {
namespace {

using Clock = std::chrono::steady_clock;
using Bytes = std::vector<std::uint8_t>;

void put_u16(Bytes& out, std::size_t v) {
  out.push_back(static_cast<std::uint8_t>(v >> 8));
  out.push_back(static_cast<std::uint8_t>(v));
}

void put_text(Bytes& out, const std::string& s) {
  put_u16(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

// A packet: the fixed header's first byte, the remaining length as a variable byte integer,
// then `body`.
Bytes packet(std::uint8_t first, const Bytes& body) {
  Bytes out{first};
  std::size_t n = body.size();
  do {
    std::uint8_t b = n % 128;
    n /= 128;
    if (n > 0) b |= 0x80;
    out.push_back(b);
  } while (n > 0);
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

class Connection {
 public:
  Connection(const std::string& host, int port) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0)
      throw std::runtime_error("chunked subscriber: cannot resolve " + host);
    for (addrinfo* a = found; a != nullptr && fd_ < 0; a = a->ai_next) {
      fd_ = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
      if (fd_ >= 0 && ::connect(fd_, a->ai_addr, a->ai_addrlen) != 0) {
        ::close(fd_);
        fd_ = -1;
      }
    }
    ::freeaddrinfo(found);
    if (fd_ < 0) throw std::runtime_error("chunked subscriber: cannot connect");
  }
  ~Connection() {
    if (fd_ >= 0) ::close(fd_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void send(const Bytes& bytes) const {
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n <= 0) throw std::runtime_error("chunked subscriber: write failed");
      done += static_cast<std::size_t>(n);
    }
  }
  /// Sends DISCONNECT and waits for the broker to close the connection. Closing at once could
  /// reset the connection (if anything sent to us is unread), and a broker that has not read
  /// our last PUBACKs yet then drops them: it sends those messages again at the next connect.
  void disconnect(Clock::time_point deadline) const {
    send({0xe0, 0x00});  // DISCONNECT, normal: the session stays
    ::shutdown(fd_, SHUT_WR);
    std::array<std::uint8_t, 4096> sink{};
    for (pollfd p{fd_, POLLIN, 0};;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return;
      if (::read(fd_, sink.data(), sink.size()) <= 0) return;
    }
  }
  /// Appends what one read(2) returns (at most `chunk` bytes) to `in`; false at the deadline.
  bool receive(Bytes& in, std::size_t chunk, Clock::time_point deadline) const {
    pollfd p{fd_, POLLIN, 0};
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    const std::size_t at = in.size();
    in.resize(at + chunk);
    const ssize_t n = ::read(fd_, in.data() + at, chunk);
    if (n <= 0) throw std::runtime_error("chunked subscriber: the broker closed the connection");
    in.resize(at + static_cast<std::size_t>(n));
    return true;
  }

 private:
  int fd_ = -1;
};

struct Packet {
  std::uint8_t first = 0;
  const std::uint8_t* body = nullptr;
  std::size_t size = 0;
};

// The next whole packet at in[at...], if there is one; `at` moves past it.
bool next_packet(const Bytes& in, std::size_t& at, Packet& p) {
  std::size_t pos = at + 1;
  std::size_t length = 0;
  for (int shift = 0;; shift += 7) {
    if (pos >= in.size()) return false;
    if (shift > 21) throw std::runtime_error("chunked subscriber: bad remaining length");
    const std::uint8_t b = in[pos++];
    length |= static_cast<std::size_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) break;
  }
  if (in.size() - pos < length) return false;
  p = {in[at], in.data() + pos, length};
  at = pos + length;
  return true;
}

struct OwnedPacket {
  std::uint8_t first = 0;
  Bytes body;
};

// Reads until one whole packet is in and returns it (the handshakes before the drain).
OwnedPacket read_one(const Connection& c, Bytes& in, Clock::time_point deadline, const char* what) {
  for (;;) {
    std::size_t at = 0;
    Packet p;
    if (next_packet(in, at, p)) {
      OwnedPacket out{p.first, Bytes(p.body, p.body + p.size)};
      in.erase(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(at));
      return out;
    }
    if (!c.receive(in, 4096, deadline))
      throw std::runtime_error(std::string("chunked subscriber: no ") + what);
  }
}

// CONNECT, MQTT 5, clean start off, a session that never expires; returns after the CONNACK.
void open_session(const Connection& c, Bytes& in, const std::string& client_id,
                  std::uint16_t receive_maximum, Clock::time_point deadline) {
  Bytes body;
  put_text(body, "MQTT");
  body.push_back(5);     // protocol version
  body.push_back(0x00);  // flags: clean start off, no will, no user name
  put_u16(body, 0);      // keep-alive off: the drain is short
  const Bytes properties = {0x11,
                            0xff,
                            0xff,
                            0xff,
                            0xff,  // session expiry: never
                            0x21,
                            static_cast<std::uint8_t>(receive_maximum >> 8),
                            static_cast<std::uint8_t>(receive_maximum)};
  body.push_back(static_cast<std::uint8_t>(properties.size()));
  body.insert(body.end(), properties.begin(), properties.end());
  put_text(body, client_id);
  c.send(packet(0x10, body));
  const OwnedPacket connack = read_one(c, in, deadline, "CONNACK");
  if (connack.first != 0x20 || connack.body.size() < 2 || connack.body[1] != 0)
    throw std::runtime_error("chunked subscriber: the broker refused the connection");
}

// Hands a QoS 1 PUBLISH's topic and payload to `consumer`: after the topic, the packet id and
// the MQTT 5 properties (a variable-length size, then that many bytes).
void hand_over(ChunkConsumer& consumer, const Packet& p, std::size_t topic_size) {
  std::size_t pos = 2 + topic_size + 2;
  std::size_t properties = 0;
  for (int shift = 0;; shift += 7) {
    if (pos >= p.size || shift > 21) throw std::runtime_error("chunked subscriber: bad PUBLISH");
    const std::uint8_t b = p.body[pos++];
    properties |= static_cast<std::size_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) break;
  }
  if (p.size - pos < properties) throw std::runtime_error("chunked subscriber: bad PUBLISH");
  pos += properties;
  consumer.message(std::string_view(reinterpret_cast<const char*>(p.body + 2), topic_size),
                   ByteView(p.body + pos, p.size - pos));
}

}  // namespace

ChunkedSubscriber::ChunkedSubscriber(std::string host, int port, std::string client_id,
                                     std::string topic, std::uint16_t receive_maximum,
                                     std::chrono::microseconds caught_up_pause)
    : host_(std::move(host)),
      port_(port),
      client_id_(std::move(client_id)),
      topic_(std::move(topic)),
      receive_maximum_(receive_maximum),
      caught_up_pause_(caught_up_pause) {}

void ChunkedSubscriber::create_session(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  Connection c(host_, port_);
  Bytes in;
  open_session(c, in, client_id_, receive_maximum_, deadline);
  Bytes body;
  put_u16(body, 1);   // packet identifier
  body.push_back(0);  // no properties
  put_text(body, topic_);
  body.push_back(1);  // QoS 1
  c.send(packet(0x82, body));
  const OwnedPacket suback = read_one(c, in, deadline, "SUBACK");
  if (suback.first != 0x90 || suback.body.size() < 4 || suback.body.back() != 1)
    throw std::runtime_error("chunked subscriber: the subscription was not granted at QoS 1");
  c.disconnect(deadline);
}

DrainFigures ChunkedSubscriber::drain(std::size_t expected, std::chrono::milliseconds timeout,
                                      ChunkConsumer* consumer) {
  DrainFigures r;
  r.messages = expected;
  const auto deadline = Clock::now() + timeout;
  const ProcessCost before = own_cost();
  std::int64_t first_us = 0;
  std::int64_t last_us = 0;
  {
    Connection c(host_, port_);
    Bytes in;
    open_session(c, in, client_id_, receive_maximum_, deadline);
    in.reserve(2 * kChunk);
    Bytes acks;
    // Messages that came in the CONNACK's read are parsed before the first read of their own.
    bool leftover = !in.empty();
    while (r.delivered < expected) {
      std::size_t read = kChunk;  // the leftover is handled without a pause
      if (!std::exchange(leftover, false)) {
        const std::size_t had = in.size();
        if (!c.receive(in, kChunk, deadline)) break;
        read = in.size() - had;
      }
      std::size_t at = 0;
      Packet p;
      acks.clear();
      std::size_t received = 0;
      while (next_packet(in, at, p)) {
        if ((p.first & 0xf0) != 0x30) continue;  // not a PUBLISH
        if (((p.first >> 1) & 3) != 1) throw std::runtime_error("chunked subscriber: not QoS 1");
        if (p.size < 4) throw std::runtime_error("chunked subscriber: short PUBLISH");
        const std::size_t topic_size = (std::size_t{p.body[0]} << 8) | p.body[1];
        if (p.size < 2 + topic_size + 2)
          throw std::runtime_error("chunked subscriber: bad PUBLISH");
        const std::uint8_t* id = p.body + 2 + topic_size;
        acks.insert(acks.end(), {0x40, 0x02, id[0], id[1]});  // PUBACK, success
        ++received;
        if (consumer != nullptr) hand_over(*consumer, p, topic_size);
      }
      in.erase(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(at));
      if (received == 0) continue;
      if (consumer != nullptr) consumer->chunk_end();  // before any of the chunk's PUBACKs
      const auto now = static_cast<std::int64_t>(::dsekp::edge::daemon::unix_us_now());
      if (r.delivered == 0) first_us = now;
      last_us = now;
      r.delivered += received;
      c.send(acks);  // one write for the whole chunk's messages
      // Caught up with the broker: let messages gather instead of waking for each one.
      if (read < kChunk && caught_up_pause_.count() > 0)
        std::this_thread::sleep_for(caught_up_pause_);
    }
    c.disconnect(deadline);
  }
  const ProcessCost cost = own_cost().minus(before);
  r.seconds = static_cast<double>(last_us - first_us) / 1e6;
  finish_drain(r, cost);
  return r;
}

}  // namespace dsekp::bench::edge
