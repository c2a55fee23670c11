// The in-process handshake probe (see handshake_probe.hpp).
#include "handshake_probe.hpp"

#include <mosquitto.h>

#include <array>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "crypto/mbedtls/mbedtls_crypto.hpp"
#include "dsekp/device_session.hpp"
#include "dsekp/error.hpp"

namespace dsekp::bench::e2e {

using Clock = std::chrono::steady_clock;

struct HandshakeProbe::Client {
  explicit Client(device::ProvisionedDevice d)
      : device(std::move(d)), session(crypto, device.credentials) {}
  ~Client() {
    if (mosq != nullptr) {
      if (connack == 0) (void)mosquitto_disconnect(mosq);
      mosquitto_destroy(mosq);
    }
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  [[nodiscard]] std::string id() const { return std::string(device.credentials.dev_id.str()); }

  device::ProvisionedDevice device;
  MbedtlsCrypto crypto;
  MbedtlsRng rng;
  DeviceSession session;
  mosquitto* mosq = nullptr;
  std::optional<int> connack;
  int suback_mid = -1;
  bool suback_refused = false;
  bool awaiting_ack = false;
  std::optional<Clock::time_point> ack_at;  // when handle_ack accepted the awaited ACK
  std::size_t used = 0;                     // handshakes run with this identity
};

namespace {

void lib_init() {
  static std::once_flag once;
  std::call_once(once, [] { mosquitto_lib_init(); });
}

void on_connect(mosquitto*, void* self, int rc) {
  static_cast<HandshakeProbe::Client*>(self)->connack = rc;
}

void on_subscribe(mosquitto*, void* self, int mid, int count, const int* granted) {
  auto* c = static_cast<HandshakeProbe::Client*>(self);
  c->suback_mid = mid;
  c->suback_refused = count < 1 || granted[0] > 2;  // 0x80: refused (e.g. by the ACL)
}

void on_message(mosquitto*, void* self, const mosquitto_message* m) {
  auto* c = static_cast<HandshakeProbe::Client*>(self);
  if (!c->awaiting_ack || m->topic == nullptr || c->device.topics.ack != m->topic) return;
  AckFrame ack;
  const ByteView wire(static_cast<const std::uint8_t*>(m->payload),
                      static_cast<std::size_t>(m->payloadlen));
  if (decode_ack(wire, ack) != Error::ok) return;
  // Anything but ok (e.g. the late ACK of an earlier INIT) leaves the handshake open.
  if (c->session.handle_ack(ack) == Error::ok) {
    c->ack_at = Clock::now();
    c->awaiting_ack = false;
  }
}

/// Runs the client's network loop until `done()` or `deadline`; false on timeout. Throws if the
/// connection breaks.
template <typename Done>
bool pump(HandshakeProbe::Client& c, Clock::time_point deadline, const ProbeOptions& o, Done done) {
  while (!done()) {
    if (o.check) o.check();
    if (Clock::now() >= deadline) return false;
    // Returns as soon as the socket is readable (or after 100 ms), after handling what came.
    const int rc = mosquitto_loop(c.mosq, 100, 1);
    if (rc != MOSQ_ERR_SUCCESS && !done())
      throw std::runtime_error("handshake probe: the connection of " + c.id() +
                               " failed: " + mosquitto_strerror(rc));
  }
  return true;
}

}  // namespace

HandshakeProbe::HandshakeProbe(std::vector<device::ProvisionedDevice> identities,
                               ProbeOptions options)
    : options_(std::move(options)) {
  if (identities.empty()) throw std::invalid_argument("handshake probe: no identities");
  lib_init();
  for (auto& identity : identities) {
    auto c = std::make_unique<Client>(std::move(identity));
    if (!c->crypto.ready() || !c->rng.ready())
      throw std::runtime_error("handshake probe: the mbedTLS backend could not be set up");
    c->mosq = mosquitto_new(c->id().c_str(), true, c.get());
    if (c->mosq == nullptr) throw std::runtime_error("handshake probe: mosquitto_new failed");
    mosquitto_connect_callback_set(c->mosq, on_connect);
    mosquitto_subscribe_callback_set(c->mosq, on_subscribe);
    mosquitto_message_callback_set(c->mosq, on_message);
    // Latency is what is measured: no Nagle delay on the INIT (the fleet does the same).
    (void)mosquitto_int_option(c->mosq, MOSQ_OPT_TCP_NODELAY, 1);
    if (!c->device.username.empty() &&
        mosquitto_username_pw_set(c->mosq, c->device.username.c_str(),
                                  c->device.password.c_str()) != MOSQ_ERR_SUCCESS)
      throw std::runtime_error("handshake probe: cannot set the login of " + c->id());
    if (const int rc = mosquitto_connect(c->mosq, options_.host.c_str(), options_.port, 60);
        rc != MOSQ_ERR_SUCCESS)
      throw std::runtime_error("handshake probe: cannot connect " + c->id() + " to " +
                               options_.host + ":" + std::to_string(options_.port) + ": " +
                               mosquitto_strerror(rc));
    const auto deadline = Clock::now() + options_.connect_timeout;
    Client& cr = *c;
    if (!pump(cr, deadline, options_, [&cr] { return cr.connack.has_value(); }))
      throw std::runtime_error("handshake probe: no CONNACK for " + c->id());
    if (*c->connack != 0)
      throw std::runtime_error("handshake probe: the broker refused the login of " + c->id() +
                               ": " + mosquitto_connack_string(*c->connack));
    int mid = 0;
    if (mosquitto_subscribe(c->mosq, &mid, c->device.topics.ack.c_str(), options_.qos) !=
        MOSQ_ERR_SUCCESS)
      throw std::runtime_error("handshake probe: cannot subscribe " + c->id());
    if (!pump(cr, deadline, options_, [&cr, mid] { return cr.suback_mid == mid; }))
      throw std::runtime_error("handshake probe: no SUBACK for " + c->id());
    if (c->suback_refused)
      throw std::runtime_error("handshake probe: the broker refused the subscription of " +
                               c->id() + " to " + c->device.topics.ack);
    clients_.push_back(std::move(c));
  }
}

HandshakeProbe::~HandshakeProbe() = default;

ProbeResult HandshakeProbe::run(std::size_t count) {
  std::size_t capacity = 0;
  for (const auto& c : clients_) capacity += kHandshakesPerIdentity - c->used;
  if (count > capacity)
    throw std::invalid_argument("handshake probe: " + std::to_string(count) +
                                " handshakes need more identities (room for " +
                                std::to_string(capacity) + ")");
  ProbeResult result;
  result.latency_us.reserve(count);
  std::optional<Clock::time_point> first_init;
  Clock::time_point last_ack{};
  std::array<std::uint8_t, kMaxFrameSize> wire{};
  for (std::size_t i = 0; i < count; ++i) {
    while (clients_[next_]->used >= kHandshakesPerIdentity) next_ = (next_ + 1) % clients_.size();
    Client& c = *clients_[next_];
    next_ = (next_ + 1) % clients_.size();
    ++c.used;
    ++result.attempted;

    // Prepare the INIT outside the timed interval: the device's key schedule and proof are
    // CPU work on the device, not handshake round-trip (`dsekp bench handshake` has its cost).
    const auto now_s =
        static_cast<std::uint32_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count());
    InitFrame init;
    if (const Error e = c.session.start_handshake(now_s, c.rng, init); e != Error::ok)
      throw std::runtime_error("handshake probe: start_handshake failed for " + c.id() + ": " +
                               error_name(e));
    std::size_t n = 0;
    if (const Error e = encode(init, options_.encoding, MutableByteView(wire), n); e != Error::ok)
      throw std::runtime_error(std::string("handshake probe: cannot encode the INIT: ") +
                               error_name(e));
    c.ack_at.reset();
    c.awaiting_ack = true;

    const auto t0 = Clock::now();
    if (!first_init) first_init = t0;
    // Not in a callback and no network thread: libmosquitto writes the packet right away.
    const int rc = mosquitto_publish(c.mosq, nullptr, c.device.topics.init.c_str(),
                                     static_cast<int>(n), wire.data(), options_.qos, false);
    if (rc != MOSQ_ERR_SUCCESS)
      throw std::runtime_error("handshake probe: cannot publish the INIT of " + c.id() + ": " +
                               mosquitto_strerror(rc));
    Rng& rng = c.rng;
    (void)c.session.note_init_sent(
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count()),
        rng);
    if (pump(c, t0 + options_.ack_timeout, options_, [&c] { return c.ack_at.has_value(); })) {
      ++result.ok;
      last_ack = *c.ack_at;
      result.latency_us.push_back(
          std::chrono::duration<double, std::micro>(*c.ack_at - t0).count());
    } else {
      ++result.timeouts;
      c.awaiting_ack = false;
    }
  }
  if (first_init && result.ok > 0)
    result.wall_s = std::chrono::duration<double>(last_ack - *first_init).count();
  return result;
}

}  // namespace dsekp::bench::e2e
