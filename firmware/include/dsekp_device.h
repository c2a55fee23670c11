/* The DSEKP device SDK: a C API over the protocol core's DeviceSession, for firmware.
 *
 * What it does: holds one device's provisioned material and session state, turns a handshake
 * start into INIT bytes, verifies the edge's ACK, seals readings into DATA frames and opens
 * downlink frames. Everything is bytes in, bytes out: the application publishes what it gets on
 * the topics named by dsekp_device_topic() and passes in what it receives, with the time.
 *
 * What it does not do: no allocation (the session lives in a dsekp_device the application owns,
 * static or on its task's stack), no MQTT, no clock, no storage. Randomness comes from the
 * application's callback (esp_fill_random on an ESP32, a TRNG driver elsewhere); it must be a
 * cryptographic source. For a small driver that also runs retransmission and rekeying over the
 * application's MQTT client and clock, see dsekp_client.h.
 *
 * Errors: every function returning int returns DSEKP_OK (0) or one of the DSEKP_ERR_* codes,
 * which are the protocol core's error values (dsekp::Error); dsekp_device_error_name() gives the
 * stable snake_case name used in logs. Not thread-safe: one dsekp_device per task.
 *
 * Buffers: out-buffers are written only on success, except that on failure a partial output is
 * zeroed. A DATA frame needs dsekp_device_max_frame_size(plaintext_len) bytes of output space;
 * an INIT needs at most DSEKP_MAX_INIT_SIZE. */
#ifndef DSEKP_DEVICE_H
#define DSEKP_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes (values of dsekp::Error; checked against the core at compile time). */
enum {
  DSEKP_OK = 0,
  DSEKP_ERR_FRAME_EMPTY = 1,
  DSEKP_ERR_FRAME_TOO_LARGE = 2,
  DSEKP_ERR_UNKNOWN_FRAME_TYPE = 3,
  DSEKP_ERR_TRUNCATED = 4,
  DSEKP_ERR_TRAILING_BYTES = 5,
  DSEKP_ERR_JSON_SYNTAX = 6,
  DSEKP_ERR_JSON_NOT_OBJECT = 7,
  DSEKP_ERR_JSON_TOO_MANY_FIELDS = 8,
  DSEKP_ERR_JSON_UNKNOWN_FIELD = 9,
  DSEKP_ERR_JSON_DUPLICATE_FIELD = 10,
  DSEKP_ERR_JSON_MISSING_FIELD = 11,
  DSEKP_ERR_JSON_WRONG_TYPE = 12,
  DSEKP_ERR_BAD_INTEGER = 13,
  DSEKP_ERR_BAD_BASE64 = 14,
  DSEKP_ERR_BAD_FIELD_LENGTH = 15,
  DSEKP_ERR_BAD_DEV_ID = 16,
  DSEKP_ERR_UNSUPPORTED_VERSION = 17,
  DSEKP_ERR_PAYLOAD_TOO_LARGE = 18,
  DSEKP_ERR_UNKNOWN_DEVICE = 19,
  DSEKP_ERR_STALE_TIMESTAMP = 20,
  DSEKP_ERR_BAD_PROOF = 21,
  DSEKP_ERR_DUPLICATE_INIT = 22,
  DSEKP_ERR_SUPERSEDED_INIT = 23,
  DSEKP_ERR_RATE_LIMITED = 24,
  DSEKP_ERR_UNKNOWN_SESSION = 25,
  DSEKP_ERR_NONCE_MISMATCH = 26,
  DSEKP_ERR_AUTH_FAILED = 27,
  DSEKP_ERR_REPLAY = 28,
  DSEKP_ERR_TOO_OLD = 29,
  DSEKP_ERR_DEV_ID_MISMATCH = 30,
  DSEKP_ERR_NO_PENDING_HANDSHAKE = 31,
  DSEKP_ERR_ACK_MISMATCH = 32,
  DSEKP_ERR_BAD_ACK_PROOF = 33,
  DSEKP_ERR_ACK_REJECTED = 34,
  DSEKP_ERR_NO_SESSION = 35,
  DSEKP_ERR_SESSION_EXHAUSTED = 36,
  DSEKP_ERR_BUFFER_TOO_SMALL = 37,
  DSEKP_ERR_INVALID_ARGUMENT = 38,
  DSEKP_ERR_CRYPTO_FAILURE = 39,
  DSEKP_ERR_REKEY_MISMATCH = 40,
  DSEKP_ERR_STALE_REKEY = 41,
  DSEKP_ERR_BAD_REKEY_PROOF = 42,
  DSEKP_ERR_SECRET_STORE_FAILED = 43,
  DSEKP_ERROR_COUNT = 44
};

/** Wire encoding of the frames this device sends. The device accepts both on receipt, unless
 *  the library was built with DSEKP_CODEC_NO_JSON or DSEKP_CODEC_NO_COMPACT (docs/FIRMWARE.md):
 *  then it sends and accepts only the other, and dsekp_device_init refuses the left-out one
 *  with DSEKP_ERR_INVALID_ARGUMENT. */
typedef enum { DSEKP_ENCODING_JSON = 0, DSEKP_ENCODING_COMPACT = 1 } dsekp_encoding;

/** The topics of one device (PROTOCOL.md section 2). */
typedef enum {
  DSEKP_TOPIC_INIT = 0, /* dsekp/init (or dsekp/init/{dev_id}): publish INITs */
  DSEKP_TOPIC_ACK = 1,  /* dsekp/init/ack/{dev_id}: subscribe */
  DSEKP_TOPIC_DATA = 2, /* dsekp/data (or dsekp/data/{dev_id}): publish DATA */
  DSEKP_TOPIC_DOWN = 3, /* dsekp/down/{dev_id}: subscribe */
  DSEKP_TOPIC_REKEY = 4 /* dsekp/rekey/{dev_id}: subscribe (v1.1) */
} dsekp_topic;

/** Fills `out` with `len` cryptographically random bytes. Returns 0 on success; anything else
 *  makes the calling function fail with DSEKP_ERR_CRYPTO_FAILURE. */
typedef int (*dsekp_random_fn)(void* user, uint8_t* out, size_t len);

/** Ratchet mode (PROTOCOL.md 6.6; `dsekp keys add --ratchet`, the material header's
 *  DSEKP_RATCHET): replaces the device's stored secret and epoch with `secret` (32 bytes) and
 *  `epoch`. Return 0 only once the write can no longer be lost, by a power cut included, with the
 *  pair written all or nothing and no copy of the replaced secret left in the storage; anything
 *  else refuses the ACK being handled (DSEKP_ERR_SECRET_STORE_FAILED) and the stored pair must
 *  be the old one. Called once per established session, before the session starts. */
typedef int (*dsekp_store_secret_fn)(void* user, const uint8_t* secret, size_t secret_len,
                                     uint32_t epoch);

/* Size of dsekp_ratchet (checked at compile time, like DSEKP_DEVICE_STORAGE_SIZE). */
#ifndef DSEKP_RATCHET_STORAGE_SIZE
#define DSEKP_RATCHET_STORAGE_SIZE 96
#endif

/** A device's ratchet: the store callback and the REKEY key of the secret before the last step.
 *  Opaque; owned by the application (static storage, not a local of setup()), one per device,
 *  set up once per boot with dsekp_ratchet_init; it must outlive the dsekp_device it is given
 *  to and not be wiped while that device is in use. A firmware that never calls
 *  dsekp_ratchet_init does not link the ratchet's code. */
typedef struct dsekp_ratchet {
  union {
    uint64_t align_u64;
    void* align_ptr;
    unsigned char bytes[DSEKP_RATCHET_STORAGE_SIZE];
  } opaque;
} dsekp_ratchet;

/** Sets up `ratchet` with the application's store (INVALID_ARGUMENT for a null pointer). */
int dsekp_ratchet_init(dsekp_ratchet* ratchet, dsekp_store_secret_fn store, void* store_user);

/** Wipes the ratchet's key; it must be initialised again before use. */
void dsekp_ratchet_wipe(dsekp_ratchet* ratchet);

/** What a device is provisioned with (`dsekp keys add ... --format header` prints it), and how
 *  it behaves. The SDK copies what it needs; the caller may wipe its copy after init. */
typedef struct dsekp_device_params {
  const char* dev_id;        /* NUL-terminated, 1-64 characters of [A-Za-z0-9._-] */
  const uint8_t* dev_secret; /* DEV_SECRET, exactly 32 bytes */
  const uint8_t* edge_salt;  /* EDGE_SALT */
  size_t edge_salt_len;      /* 16-32 */
  dsekp_encoding encoding;   /* of the INIT and DATA frames sent */
  int clockless;             /* nonzero: `t` is a counter the application persists (see begin) */
  uint32_t rekey_at_seq;     /* dsekp_device_rekey_due() from this seq on; 0 = default 0xFFFF0000 */
  dsekp_random_fn random;    /* required */
  void* random_user;         /* passed to `random` */
  int per_device_topics;     /* nonzero: publish on dsekp/init/{dev_id} and dsekp/data/{dev_id}
                                (the material header's DSEKP_PER_DEVICE_TOPICS); 0: the paper's
                                shared dsekp/init and dsekp/data */
  const char* topic_prefix;  /* the deployment's topic prefix in front of every topic (the
                                material header's DSEKP_TOPIC_PREFIX, e.g. "site1/"); NULL or
                                "": none. At most DSEKP_TOPIC_PREFIX_MAX printable characters,
                                no space, '+' or '#' */
  dsekp_ratchet* ratchet;    /* ratchet mode (the material header's DSEKP_RATCHET): set up with
                                dsekp_ratchet_init; dev_secret and epoch are then the pair the
                                storage holds (the provisioned secret and 0 at first). NULL: the
                                device keeps its provisioned secret (v1) */
  uint32_t epoch;            /* ratchet mode: the epoch of dev_secret; must be 0 without */
} dsekp_device_params;

/** Longest topic prefix the SDK holds. */
#define DSEKP_TOPIC_PREFIX_MAX 32

/* Size of dsekp_device. The SDK checks at compile time that its state fits. The defaults are the
 * measured sizes with mbedTLS 2.28's software AES-GCM on 32-bit MCUs (Cortex-M4, rv32imac) and on
 * 64-bit hosts; on ESP-IDF and Arduino-ESP32 (ESP_PLATFORM), whose mbedTLS uses the AES
 * accelerator with a larger GCM context, a generous 2048 that has NOT been checked on hardware
 * here. A platform whose state does not fit must define a larger value for the SDK and the
 * application alike (the compiler names the macro); dsekp_device_state_size() tells what the
 * state needs. Sealing and opening use no frame buffer of their own: they work in the caller's
 * output buffers. */
#ifndef DSEKP_DEVICE_STORAGE_SIZE
#if defined(ESP_PLATFORM)
#define DSEKP_DEVICE_STORAGE_SIZE 2048
#elif UINTPTR_MAX > 0xFFFFFFFFu
#define DSEKP_DEVICE_STORAGE_SIZE 1248
#else
#define DSEKP_DEVICE_STORAGE_SIZE 1152
#endif
#endif

/** Largest INIT frame (JSON, 64-character dev_id). */
#define DSEKP_MAX_INIT_SIZE 256
/** Largest plaintext of a DATA or downlink frame: the core's kMaxPayloadSize (the SDK checks
 *  that they agree at compile time). */
#ifndef DSEKP_MAX_PAYLOAD_SIZE
#define DSEKP_MAX_PAYLOAD_SIZE 1024
#endif

/** One device session. Opaque: only the functions below touch it. */
typedef struct dsekp_device {
  union {
    uint64_t align_u64;
    void* align_ptr;
    unsigned char bytes[DSEKP_DEVICE_STORAGE_SIZE];
  } opaque;
} dsekp_device;

/** Sets up `dev` (any previous content is overwritten, not wiped: call dsekp_device_wipe first
 *  when re-initialising). Fails with INVALID_ARGUMENT (null pointer, missing random callback),
 *  BAD_DEV_ID, or CRYPTO_FAILURE (mbedTLS could not set up its contexts). */
int dsekp_device_init(dsekp_device* dev, const dsekp_device_params* params);

/** Wipes every secret and the session state; `dev` must be initialised again before use. */
void dsekp_device_wipe(dsekp_device* dev);

/** Starts a handshake: draws a fresh sessctr and DevNonce, derives the handshake keys and
 *  writes the INIT (publish it on DSEKP_TOPIC_INIT, then call dsekp_device_note_init_sent).
 *  `t` is Unix seconds from the device clock, or for a clockless device its persisted counter,
 *  which the application must increase and persist before every call. Replaces any outstanding
 *  handshake; an established session keeps sealing until the new ACK arrives. If only the
 *  output buffer was too small the handshake has started: fetch the INIT with
 *  dsekp_device_current_init. */
int dsekp_device_begin_session(dsekp_device* dev, uint32_t t, uint8_t* out, size_t out_cap,
                               size_t* out_len);

/** The outstanding INIT again, byte-identical, for retransmission. NO_PENDING_HANDSHAKE if none. */
int dsekp_device_current_init(const dsekp_device* dev, uint8_t* out, size_t out_cap,
                              size_t* out_len);

/** Records that the INIT was published at `now_ms` (a monotonic millisecond clock) and schedules
 *  the next retransmission (exponential backoff with jitter from the random callback). */
int dsekp_device_note_init_sent(dsekp_device* dev, uint64_t now_ms);

/** Nonzero when the outstanding INIT should be published again at `now_ms`. */
int dsekp_device_retransmit_due(const dsekp_device* dev, uint64_t now_ms);

/** Nonzero when the outstanding INIT is too old for the edge to accept: begin a new session. */
int dsekp_device_handshake_expired(const dsekp_device* dev, uint64_t now_ms);

/** Handles a message received on DSEKP_TOPIC_ACK: decodes it (JSON or compact), verifies the
 *  edge's proof and installs the new session. Until then nothing changes. After success the
 *  device should seal a frame promptly (an empty one will do) so the edge confirms the session. */
int dsekp_device_handle_ack(dsekp_device* dev, const uint8_t* msg, size_t msg_len);

/** Seals `plaintext` (up to DSEKP_MAX_PAYLOAD_SIZE bytes; may be empty) as the next DATA frame
 *  of the established session and writes the encoded frame for DSEKP_TOPIC_DATA. `sendts_ms` is
 *  the Unix time in milliseconds (authenticated, used by the edge for latency logs). `out_cap`
 *  below dsekp_device_max_frame_size(plaintext_len) fails with BUFFER_TOO_SMALL before the seq
 *  is consumed. `out` also serves as the working buffer (the ciphertext is sealed into its tail),
 *  so it must not overlap `plaintext` (INVALID_ARGUMENT). NO_SESSION before the first ACK;
 *  SESSION_EXHAUSTED at the end of the seq space. */
int dsekp_device_seal(dsekp_device* dev, const uint8_t* plaintext, size_t plaintext_len,
                      uint64_t sendts_ms, uint8_t* out, size_t out_cap, size_t* out_len);

/** Handles a message received on DSEKP_TOPIC_DOWN: authenticates it against the current session,
 *  checks it is not a replay, and writes the plaintext (never any unauthenticated byte). The
 *  ciphertext is decoded into `plaintext` and decrypted there, so `plaintext` must not overlap
 *  `msg` (INVALID_ARGUMENT); on any failure `plaintext` is wiped. */
int dsekp_device_open_downlink(dsekp_device* dev, const uint8_t* msg, size_t msg_len,
                               uint8_t* plaintext, size_t plaintext_cap, size_t* plaintext_len);

/** Handles a message received on DSEKP_TOPIC_REKEY: the edge does not hold the current session
 *  (it lost its state) and asks for a new one. Authenticates the request and checks it names
 *  the current session and a recently sent seq; on success dsekp_device_rekey_due() is nonzero,
 *  so the next begin_session starts the new handshake. `now_ms`: the monotonic clock. Refusals:
 *  NO_SESSION, REKEY_MISMATCH, STALE_REKEY, RATE_LIMITED (one per minute), BAD_REKEY_PROOF. */
int dsekp_device_handle_rekey(dsekp_device* dev, const uint8_t* msg, size_t msg_len,
                              uint64_t now_ms);

/** State queries (0 or 1, or the value). */
int dsekp_device_established(const dsekp_device* dev);
int dsekp_device_handshake_pending(const dsekp_device* dev);
int dsekp_device_confirmation_pending(const dsekp_device* dev);
int dsekp_device_rekey_due(const dsekp_device* dev);
/** dsekp_device_rekey_due, or the session is older than a day at `now_ms` (the monotonic clock
 *  of dsekp_device_note_init_sent): a bound on how long a device keeps sending under a session
 *  the edge may have lost. */
int dsekp_device_rekey_due_at(const dsekp_device* dev, uint64_t now_ms);
uint16_t dsekp_device_sessctr(const dsekp_device* dev);
/** Ratchet steps the device's secret is past the provisioned one (0 without the ratchet). */
uint32_t dsekp_device_epoch(const dsekp_device* dev);
uint64_t dsekp_device_next_seq(const dsekp_device* dev);

/** Writes the NUL-terminated topic name, the topic prefix included; returns its length, or 0 if
 *  `out_cap` is too small or `dev` is not initialised. 112 bytes hold any topic. */
size_t dsekp_device_topic(const dsekp_device* dev, dsekp_topic topic, char* out, size_t out_cap);

/** Output space a DATA frame with `plaintext_len` bytes may need (JSON, 64-character dev_id). */
size_t dsekp_device_max_frame_size(size_t plaintext_len);

/** Bytes of dsekp_device the state really uses (at most DSEKP_DEVICE_STORAGE_SIZE). */
size_t dsekp_device_state_size(void);

/** Overwrites `len` bytes at `p` with zeros in a way the compiler does not remove (for the
 *  application's copies of secrets, e.g. the stored secret once dsekp_device_init took it). */
void dsekp_wipe(void* p, size_t len);

/** Stable snake_case name of a status code ("ok", "bad_ack_proof", ...). Never NULL. */
const char* dsekp_device_error_name(int status);

#ifdef __cplusplus
}
#endif

#endif /* DSEKP_DEVICE_H */
