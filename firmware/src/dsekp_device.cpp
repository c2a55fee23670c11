// The C API of the device SDK (dsekp_device.h) over dsekp::DeviceSession and the mbedTLS backend.
//
// The state lives in the caller's dsekp_device, constructed there with placement new: no heap.
// Compiled with the device flags (-fno-exceptions -fno-rtti) like the core.
#include "dsekp_device.h"

#include <cstring>
#include <new>
#include <type_traits>

#include "crypto/mbedtls/mbedtls_crypto.hpp"
#include "dsekp/codec.hpp"
#include "dsekp/device_ratchet.hpp"
#include "dsekp/device_session.hpp"
#include "dsekp/encodings_built.hpp"
#include "dsekp/error.hpp"

namespace {

using dsekp::ByteView;
using dsekp::Error;
using dsekp::MutableByteView;

// The C status codes are the core's Error values; a reordering in the core must not compile.
#define DSEKP_CHECK_CODE(c_name, core_name) \
  static_assert(c_name == static_cast<int>(Error::core_name), #c_name " != Error::" #core_name)
DSEKP_CHECK_CODE(DSEKP_OK, ok);
DSEKP_CHECK_CODE(DSEKP_ERR_FRAME_EMPTY, frame_empty);
DSEKP_CHECK_CODE(DSEKP_ERR_FRAME_TOO_LARGE, frame_too_large);
DSEKP_CHECK_CODE(DSEKP_ERR_UNKNOWN_FRAME_TYPE, unknown_frame_type);
DSEKP_CHECK_CODE(DSEKP_ERR_TRUNCATED, truncated);
DSEKP_CHECK_CODE(DSEKP_ERR_TRAILING_BYTES, trailing_bytes);
DSEKP_CHECK_CODE(DSEKP_ERR_JSON_SYNTAX, json_syntax);
DSEKP_CHECK_CODE(DSEKP_ERR_JSON_NOT_OBJECT, json_not_object);
DSEKP_CHECK_CODE(DSEKP_ERR_JSON_TOO_MANY_FIELDS, json_too_many_fields);
DSEKP_CHECK_CODE(DSEKP_ERR_JSON_UNKNOWN_FIELD, json_unknown_field);
DSEKP_CHECK_CODE(DSEKP_ERR_JSON_DUPLICATE_FIELD, json_duplicate_field);
DSEKP_CHECK_CODE(DSEKP_ERR_JSON_MISSING_FIELD, json_missing_field);
DSEKP_CHECK_CODE(DSEKP_ERR_JSON_WRONG_TYPE, json_wrong_type);
DSEKP_CHECK_CODE(DSEKP_ERR_BAD_INTEGER, bad_integer);
DSEKP_CHECK_CODE(DSEKP_ERR_BAD_BASE64, bad_base64);
DSEKP_CHECK_CODE(DSEKP_ERR_BAD_FIELD_LENGTH, bad_field_length);
DSEKP_CHECK_CODE(DSEKP_ERR_BAD_DEV_ID, bad_dev_id);
DSEKP_CHECK_CODE(DSEKP_ERR_UNSUPPORTED_VERSION, unsupported_version);
DSEKP_CHECK_CODE(DSEKP_ERR_PAYLOAD_TOO_LARGE, payload_too_large);
DSEKP_CHECK_CODE(DSEKP_ERR_UNKNOWN_DEVICE, unknown_device);
DSEKP_CHECK_CODE(DSEKP_ERR_STALE_TIMESTAMP, stale_timestamp);
DSEKP_CHECK_CODE(DSEKP_ERR_BAD_PROOF, bad_proof);
DSEKP_CHECK_CODE(DSEKP_ERR_DUPLICATE_INIT, duplicate_init);
DSEKP_CHECK_CODE(DSEKP_ERR_SUPERSEDED_INIT, superseded_init);
DSEKP_CHECK_CODE(DSEKP_ERR_RATE_LIMITED, rate_limited);
DSEKP_CHECK_CODE(DSEKP_ERR_UNKNOWN_SESSION, unknown_session);
DSEKP_CHECK_CODE(DSEKP_ERR_NONCE_MISMATCH, nonce_mismatch);
DSEKP_CHECK_CODE(DSEKP_ERR_AUTH_FAILED, auth_failed);
DSEKP_CHECK_CODE(DSEKP_ERR_REPLAY, replay);
DSEKP_CHECK_CODE(DSEKP_ERR_TOO_OLD, too_old);
DSEKP_CHECK_CODE(DSEKP_ERR_DEV_ID_MISMATCH, dev_id_mismatch);
DSEKP_CHECK_CODE(DSEKP_ERR_NO_PENDING_HANDSHAKE, no_pending_handshake);
DSEKP_CHECK_CODE(DSEKP_ERR_ACK_MISMATCH, ack_mismatch);
DSEKP_CHECK_CODE(DSEKP_ERR_BAD_ACK_PROOF, bad_ack_proof);
DSEKP_CHECK_CODE(DSEKP_ERR_ACK_REJECTED, ack_rejected);
DSEKP_CHECK_CODE(DSEKP_ERR_NO_SESSION, no_session);
DSEKP_CHECK_CODE(DSEKP_ERR_SESSION_EXHAUSTED, session_exhausted);
DSEKP_CHECK_CODE(DSEKP_ERR_BUFFER_TOO_SMALL, buffer_too_small);
DSEKP_CHECK_CODE(DSEKP_ERR_INVALID_ARGUMENT, invalid_argument);
DSEKP_CHECK_CODE(DSEKP_ERR_CRYPTO_FAILURE, crypto_failure);
DSEKP_CHECK_CODE(DSEKP_ERR_REKEY_MISMATCH, rekey_mismatch);
DSEKP_CHECK_CODE(DSEKP_ERR_STALE_REKEY, stale_rekey);
DSEKP_CHECK_CODE(DSEKP_ERR_BAD_REKEY_PROOF, bad_rekey_proof);
DSEKP_CHECK_CODE(DSEKP_ERR_SECRET_STORE_FAILED, secret_store_failed);
static_assert(DSEKP_ERROR_COUNT == dsekp::kErrorCount, "the C status list misses core errors");
#undef DSEKP_CHECK_CODE
static_assert(DSEKP_MAX_PAYLOAD_SIZE == dsekp::kMaxPayloadSize,
              "DSEKP_MAX_PAYLOAD_SIZE must equal the core's kMaxPayloadSize");

int status(Error e) {
  return static_cast<int>(e);
}

// The application's random callback as the core's Rng.
class CallbackRng final : public dsekp::Rng {
 public:
  CallbackRng(dsekp_random_fn fn, void* user) noexcept : fn_(fn), user_(user) {}
  Error fill(MutableByteView out) noexcept override {
    if (out.empty()) return Error::ok;
    if (fn_(user_, out.data(), out.size()) == 0) return Error::ok;
    dsekp::secure_wipe(out);
    return Error::crypto_failure;
  }

 private:
  dsekp_random_fn fn_;
  void* user_;
};

// Marks storage that holds a constructed Impl, so calls on an uninitialised or wiped dsekp_device
// fail with invalid_argument instead of reading garbage.
constexpr std::uint32_t kMagic = 0x44534B31u;         // "DSK1"
constexpr std::uint32_t kRatchetMagic = 0x44535231u;  // "DSR1"

// The application's store callback as the core's SecretStore.
class CallbackSecretStore final : public dsekp::SecretStore {
 public:
  CallbackSecretStore(dsekp_store_secret_fn fn, void* user) noexcept : fn_(fn), user_(user) {}
  bool store_secret(const dsekp::DevSecret& secret, std::uint32_t epoch) noexcept override {
    const ByteView bytes = secret.view();
    return fn_(user_, bytes.data(), bytes.size(), epoch) == 0;
  }

 private:
  dsekp_store_secret_fn fn_;
  void* user_;
};

struct RatchetImpl {
  RatchetImpl(dsekp_store_secret_fn fn, void* user) noexcept : store(fn, user), ratchet(store) {}

  std::uint32_t magic = kRatchetMagic;
  CallbackSecretStore store;  // declared before `ratchet`, which keeps a reference to it
  dsekp::DeviceRatchet ratchet;
};

static_assert(sizeof(RatchetImpl) <= DSEKP_RATCHET_STORAGE_SIZE,
              "dsekp_ratchet is too small for this platform: define a larger "
              "DSEKP_RATCHET_STORAGE_SIZE for the SDK and the application");
static_assert(alignof(RatchetImpl) <= alignof(dsekp_ratchet), "dsekp_ratchet is under-aligned");

RatchetImpl* ratchet_impl(dsekp_ratchet* r) {
  if (r == nullptr) return nullptr;
  auto* p = std::launder(reinterpret_cast<RatchetImpl*>(r->opaque.bytes));
  return p->magic == kRatchetMagic ? p : nullptr;
}

struct Impl {
  Impl(const dsekp_device_params& p, const dsekp::DeviceCredentials& credentials,
       const dsekp::DeviceConfig& config) noexcept
      : rng(p.random, p.random_user),
        session(crypto, credentials, config),
        encoding(p.encoding == DSEKP_ENCODING_COMPACT ? dsekp::Encoding::compact
                                                      : dsekp::Encoding::json),
        per_device_topics(p.per_device_topics != 0) {}

  /// The prefix, checked (printable, no space or wildcard, at most DSEKP_TOPIC_PREFIX_MAX).
  bool set_topic_prefix(const char* prefix) noexcept {
    if (prefix == nullptr) return true;
    std::size_t n = 0;
    for (; prefix[n] != '\0'; ++n) {
      const char c = prefix[n];
      if (n >= DSEKP_TOPIC_PREFIX_MAX || c <= ' ' || c > '~' || c == '+' || c == '#') return false;
      topic_prefix[n] = c;
    }
    topic_prefix_len = static_cast<std::uint8_t>(n);
    return true;
  }

  std::uint32_t magic = kMagic;
  CallbackRng rng;
  dsekp::MbedtlsCrypto crypto;  // declared before `session`, which keeps a reference to it
  dsekp::DeviceSession session;
  dsekp::Encoding encoding;
  bool per_device_topics;  // uplink on dsekp/init/{dev_id}, dsekp/data/{dev_id}
  std::uint8_t topic_prefix_len = 0;
  char topic_prefix[DSEKP_TOPIC_PREFIX_MAX] = {};  // not NUL-terminated
};

static_assert(sizeof(Impl) <= DSEKP_DEVICE_STORAGE_SIZE,
              "dsekp_device is too small for this platform: define a larger "
              "DSEKP_DEVICE_STORAGE_SIZE for the SDK and the application");
static_assert(alignof(Impl) <= alignof(dsekp_device), "dsekp_device is under-aligned");

Impl* impl(dsekp_device* dev) {
  if (dev == nullptr) return nullptr;
  auto* p = std::launder(reinterpret_cast<Impl*>(dev->opaque.bytes));
  return p->magic == kMagic ? p : nullptr;
}
const Impl* impl(const dsekp_device* dev) {
  return impl(const_cast<dsekp_device*>(dev));
}

// Length of a NUL-terminated string, or kDevIdMaxSize + 1 if it is longer than any dev_id.
std::size_t bounded_strlen(const char* s) {
  std::size_t n = 0;
  while (n <= dsekp::kDevIdMaxSize && s[n] != '\0') ++n;
  return n;
}

template <typename Frame>
int encode_to(const Frame& frame, dsekp::Encoding enc, std::uint8_t* out, std::size_t out_cap,
              std::size_t* out_len) {
  std::size_t n = 0;
  const Error e = dsekp::encode(frame, enc, MutableByteView(out, out_cap), n);
  if (e != Error::ok) {
    if (out_cap > 0) dsekp::secure_wipe(MutableByteView(out, out_cap));
    return status(e);
  }
  *out_len = n;
  return DSEKP_OK;
}

}  // namespace

extern "C" {

int dsekp_device_init(dsekp_device* dev, const dsekp_device_params* params) {
  if (dev == nullptr || params == nullptr || params->random == nullptr ||
      params->dev_id == nullptr || params->dev_secret == nullptr || params->edge_salt == nullptr) {
    return DSEKP_ERR_INVALID_ARGUMENT;
  }
  // A value outside the enum, or an encoding this build left out (encodings_built.hpp). Read as
  // its integer: a C caller may store any int there, which is no value of the C++ enum type.
  using EncodingValue = std::underlying_type_t<dsekp_encoding>;
  EncodingValue encoding_value;
  std::memcpy(&encoding_value, &params->encoding, sizeof encoding_value);
  const bool compact = encoding_value == static_cast<EncodingValue>(DSEKP_ENCODING_COMPACT);
  if ((!compact && encoding_value != static_cast<EncodingValue>(DSEKP_ENCODING_JSON)) ||
      !dsekp::encoding_built(compact ? dsekp::Encoding::compact : dsekp::Encoding::json)) {
    return DSEKP_ERR_INVALID_ARGUMENT;
  }
  std::memset(dev, 0, sizeof *dev);
  dsekp::DeviceCredentials credentials;
  const std::size_t id_len = bounded_strlen(params->dev_id);
  if (Error e = credentials.dev_id.assign(std::string_view(params->dev_id, id_len));
      e != Error::ok) {
    return status(e);
  }
  if (!credentials.dev_secret.assign(ByteView(params->dev_secret, dsekp::kDevSecretSize))) {
    return DSEKP_ERR_INVALID_ARGUMENT;
  }
  if (Error e = credentials.edge_salt.assign(ByteView(params->edge_salt, params->edge_salt_len));
      e != Error::ok) {
    return status(e);
  }
  dsekp::DeviceConfig config;
  config.clockless = params->clockless != 0;
  if (params->rekey_at_seq != 0) config.rekey_at_seq = params->rekey_at_seq;
  if (params->ratchet != nullptr) {
    RatchetImpl* r = ratchet_impl(params->ratchet);
    if (r == nullptr) return DSEKP_ERR_INVALID_ARGUMENT;  // not set up with dsekp_ratchet_init
    config.ratchet = &r->ratchet;
    credentials.epoch = params->epoch;
  } else if (params->epoch != 0) {
    return DSEKP_ERR_INVALID_ARGUMENT;  // an epoch is a ratchet's
  }

  Impl* p = new (dev->opaque.bytes) Impl(*params, credentials, config);
  if (!p->set_topic_prefix(params->topic_prefix)) {
    p->~Impl();
    dsekp::secure_wipe(MutableByteView(dev->opaque.bytes));
    return DSEKP_ERR_INVALID_ARGUMENT;
  }
  if (!p->crypto.ready()) {
    p->~Impl();
    dsekp::secure_wipe(MutableByteView(dev->opaque.bytes));
    return DSEKP_ERR_CRYPTO_FAILURE;
  }
  return DSEKP_OK;
}

void dsekp_wipe(void* p, size_t len) {
  if (p != nullptr) dsekp::secure_wipe(MutableByteView(static_cast<std::uint8_t*>(p), len));
}

int dsekp_ratchet_init(dsekp_ratchet* ratchet, dsekp_store_secret_fn store, void* store_user) {
  if (ratchet == nullptr || store == nullptr) return DSEKP_ERR_INVALID_ARGUMENT;
  std::memset(ratchet, 0, sizeof *ratchet);
  new (ratchet->opaque.bytes) RatchetImpl(store, store_user);
  return DSEKP_OK;
}

void dsekp_ratchet_wipe(dsekp_ratchet* ratchet) {
  if (ratchet == nullptr) return;
  if (RatchetImpl* p = ratchet_impl(ratchet)) p->~RatchetImpl();  // wipes its REKEY key
  dsekp::secure_wipe(MutableByteView(ratchet->opaque.bytes));
}

void dsekp_device_wipe(dsekp_device* dev) {
  if (dev == nullptr) return;
  if (Impl* p = impl(dev)) p->~Impl();  // the session and backend wipe their keys
  dsekp::secure_wipe(MutableByteView(dev->opaque.bytes));
}

int dsekp_device_begin_session(dsekp_device* dev, uint32_t t, uint8_t* out, size_t out_cap,
                               size_t* out_len) {
  Impl* p = impl(dev);
  if (p == nullptr || out == nullptr || out_len == nullptr) return DSEKP_ERR_INVALID_ARGUMENT;
  dsekp::InitFrame init;
  if (Error e = p->session.start_handshake(t, p->rng, init); e != Error::ok) return status(e);
  return encode_to(init, p->encoding, out, out_cap, out_len);
}

int dsekp_device_current_init(const dsekp_device* dev, uint8_t* out, size_t out_cap,
                              size_t* out_len) {
  const Impl* p = impl(dev);
  if (p == nullptr || out == nullptr || out_len == nullptr) return DSEKP_ERR_INVALID_ARGUMENT;
  if (!p->session.handshake_pending()) return DSEKP_ERR_NO_PENDING_HANDSHAKE;
  return encode_to(p->session.current_init(), p->encoding, out, out_cap, out_len);
}

int dsekp_device_note_init_sent(dsekp_device* dev, uint64_t now_ms) {
  Impl* p = impl(dev);
  if (p == nullptr) return DSEKP_ERR_INVALID_ARGUMENT;
  return status(p->session.note_init_sent(now_ms, p->rng));
}

int dsekp_device_retransmit_due(const dsekp_device* dev, uint64_t now_ms) {
  const Impl* p = impl(dev);
  return p != nullptr && p->session.retransmit_due(now_ms) ? 1 : 0;
}

int dsekp_device_handshake_expired(const dsekp_device* dev, uint64_t now_ms) {
  const Impl* p = impl(dev);
  return p != nullptr && p->session.handshake_expired(now_ms) ? 1 : 0;
}

int dsekp_device_handle_ack(dsekp_device* dev, const uint8_t* msg, size_t msg_len) {
  Impl* p = impl(dev);
  if (p == nullptr || (msg == nullptr && msg_len != 0)) return DSEKP_ERR_INVALID_ARGUMENT;
  dsekp::AckFrame ack;
  if (Error e = dsekp::decode_ack(ByteView(msg, msg_len), ack); e != Error::ok) return status(e);
  return status(p->session.handle_ack(ack));
}

int dsekp_device_seal(dsekp_device* dev, const uint8_t* plaintext, size_t plaintext_len,
                      uint64_t sendts_ms, uint8_t* out, size_t out_cap, size_t* out_len) {
  Impl* p = impl(dev);
  if (p == nullptr || (plaintext == nullptr && plaintext_len != 0) || out == nullptr ||
      out_len == nullptr) {
    return DSEKP_ERR_INVALID_ARGUMENT;
  }
  if (plaintext_len > dsekp::kMaxPayloadSize) return DSEKP_ERR_PAYLOAD_TOO_LARGE;
  // Checked before sealing: a seal consumes its seq even when the output could not be written.
  if (out_cap < dsekp::max_encoded_data_size(plaintext_len)) return DSEKP_ERR_BUFFER_TOO_SMALL;
  // The seal and open paths work in the caller's buffers, which must therefore be distinct.
  if (dsekp::overlap(ByteView(plaintext, plaintext_len), ByteView(out, out_cap))) {
    return DSEKP_ERR_INVALID_ARGUMENT;
  }
  // No frame buffer of our own: the ciphertext is sealed into the last plaintext_len bytes of
  // `out` and encoded from there (the codec reads it before writing over it).
  const dsekp::MutableByteView ciphertext(out + out_cap - plaintext_len, plaintext_len);
  dsekp::DataFrameView frame;
  const Error e = p->session.seal(ByteView(plaintext, plaintext_len), sendts_ms, ciphertext, frame);
  if (e != Error::ok) {
    dsekp::secure_wipe(dsekp::MutableByteView(out, out_cap));
    return status(e);
  }
  return encode_to(frame, p->encoding, out, out_cap, out_len);
}

int dsekp_device_open_downlink(dsekp_device* dev, const uint8_t* msg, size_t msg_len,
                               uint8_t* plaintext, size_t plaintext_cap, size_t* plaintext_len) {
  Impl* p = impl(dev);
  if (p == nullptr || (msg == nullptr && msg_len != 0) ||
      (plaintext == nullptr && plaintext_cap != 0) || plaintext_len == nullptr ||
      dsekp::overlap(ByteView(msg, msg_len), ByteView(plaintext, plaintext_cap))) {
    return DSEKP_ERR_INVALID_ARGUMENT;
  }
  *plaintext_len = 0;
  // The ciphertext is decoded into `plaintext` and decrypted there in place.
  const dsekp::MutableByteView buffer(plaintext, plaintext_cap);
  dsekp::DataFrameView frame;
  Error e = dsekp::decode_data(ByteView(msg, msg_len), dsekp::Direction::downlink, frame, buffer);
  std::size_t n = 0;
  if (e == Error::ok) e = p->session.open_downlink(frame, buffer, n);
  if (e != Error::ok) {
    dsekp::secure_wipe(buffer);
    return status(e);
  }
  *plaintext_len = n;
  return DSEKP_OK;
}

int dsekp_device_handle_rekey(dsekp_device* dev, const uint8_t* msg, size_t msg_len,
                              uint64_t now_ms) {
  Impl* p = impl(dev);
  if (p == nullptr || (msg == nullptr && msg_len != 0)) return DSEKP_ERR_INVALID_ARGUMENT;
  dsekp::RekeyFrame request;
  if (Error e = dsekp::decode_rekey(ByteView(msg, msg_len), request); e != Error::ok)
    return status(e);
  return status(p->session.handle_rekey(request, now_ms));
}

int dsekp_device_established(const dsekp_device* dev) {
  const Impl* p = impl(dev);
  return p != nullptr && p->session.established() ? 1 : 0;
}
int dsekp_device_handshake_pending(const dsekp_device* dev) {
  const Impl* p = impl(dev);
  return p != nullptr && p->session.handshake_pending() ? 1 : 0;
}
int dsekp_device_confirmation_pending(const dsekp_device* dev) {
  const Impl* p = impl(dev);
  return p != nullptr && p->session.confirmation_pending() ? 1 : 0;
}
int dsekp_device_rekey_due(const dsekp_device* dev) {
  const Impl* p = impl(dev);
  return p != nullptr && p->session.rekey_due() ? 1 : 0;
}
int dsekp_device_rekey_due_at(const dsekp_device* dev, uint64_t now_ms) {
  const Impl* p = impl(dev);
  return p != nullptr && p->session.rekey_due(now_ms) ? 1 : 0;
}
uint16_t dsekp_device_sessctr(const dsekp_device* dev) {
  const Impl* p = impl(dev);
  return p != nullptr ? p->session.sessctr() : 0;
}
uint32_t dsekp_device_epoch(const dsekp_device* dev) {
  const Impl* p = impl(dev);
  return p != nullptr ? p->session.epoch() : 0;
}
uint64_t dsekp_device_next_seq(const dsekp_device* dev) {
  const Impl* p = impl(dev);
  return p != nullptr ? p->session.next_seq() : 0;
}

size_t dsekp_device_topic(const dsekp_device* dev, dsekp_topic topic, char* out, size_t out_cap) {
  const Impl* p = impl(dev);
  if (p == nullptr || out == nullptr) return 0;
  const char* base = nullptr;
  bool per_device = false;
  // Switch on the bytes as an integer: a C caller may pass any int, which is not a valid value of
  // the enum in C++, and even reading it as the enum is undefined (UBSan found `(dsekp_topic)7` in
  // the C usage test; a cast still loads the enum, memcpy does not).
  std::underlying_type_t<dsekp_topic> raw_topic;
  std::memcpy(&raw_topic, &topic, sizeof raw_topic);
  switch (raw_topic) {
    case DSEKP_TOPIC_INIT:
      base = p->per_device_topics ? "dsekp/init/" : "dsekp/init";
      per_device = p->per_device_topics;
      break;
    case DSEKP_TOPIC_ACK:
      base = "dsekp/init/ack/";
      per_device = true;
      break;
    case DSEKP_TOPIC_DATA:
      base = p->per_device_topics ? "dsekp/data/" : "dsekp/data";
      per_device = p->per_device_topics;
      break;
    case DSEKP_TOPIC_DOWN:
      base = "dsekp/down/";
      per_device = true;
      break;
    case DSEKP_TOPIC_REKEY:
      base = "dsekp/rekey/";
      per_device = true;
      break;
    default:
      return 0;
  }
  const std::string_view id = per_device ? p->session.dev_id().str() : std::string_view();
  const std::size_t prefix_len = p->topic_prefix_len;
  const std::size_t base_len = std::strlen(base);
  const std::size_t n = prefix_len + base_len + id.size();
  if (n + 1 > out_cap) {
    if (out_cap > 0) out[0] = '\0';
    return 0;
  }
  std::memcpy(out, p->topic_prefix, prefix_len);
  std::memcpy(out + prefix_len, base, base_len);
  if (!id.empty()) std::memcpy(out + prefix_len + base_len, id.data(), id.size());
  out[n] = '\0';
  return n;
}

size_t dsekp_device_state_size(void) {
  return sizeof(Impl);
}

size_t dsekp_device_max_frame_size(size_t plaintext_len) {
  return dsekp::max_encoded_data_size(plaintext_len);
}

const char* dsekp_device_error_name(int status_code) {
  if (status_code < 0 || status_code >= DSEKP_ERROR_COUNT) return "unknown_status";
  return dsekp::error_name(static_cast<Error>(status_code));
}

}  // extern "C"
