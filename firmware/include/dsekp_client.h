/* A small driver over dsekp_device.h for firmware main loops: it runs the handshake, its
 * retransmission and expiry, rekeying and session confirmation, using the application's MQTT
 * client, clocks, RNG and (for clockless devices) persistent storage through callbacks.
 *
 * Use: dsekp_client_init() once; subscribe to dsekp_client_topic(c, DSEKP_TOPIC_ACK),
 * (DSEKP_TOPIC_DOWN) and (DSEKP_TOPIC_REKEY) whenever the MQTT connection is (re)established; call
 * dsekp_client_poll() from the main loop; pass every received message to dsekp_client_on_message();
 * send readings with dsekp_client_send(). Everything runs in the caller's context: no threads, no
 * allocation. Written in C so that it also shows the C API in use. */
#ifndef DSEKP_CLIENT_H
#define DSEKP_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "dsekp_device.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What the application provides. `user` is passed to every callback. */
typedef struct dsekp_client_io {
  void* user;
  /** Publishes `payload` on `topic` (QoS 1 recommended). Returns 0 once the client took it. */
  int (*publish)(void* user, const char* topic, const uint8_t* payload, size_t len);
  /** A monotonic millisecond clock (millis()); drives retransmission. Required. */
  uint64_t (*monotonic_ms)(void* user);
  /** Unix time in milliseconds, or 0 while unknown (e.g. before NTP). Required unless clockless:
   *  no handshake starts while it returns 0. Also stamps DATA frames (0 if absent). */
  uint64_t (*unix_ms)(void* user);
  /** Clockless devices only: read and write the persisted INIT counter (0 = never stored).
   *  Each returns 0 on success; a handshake does not start unless the store succeeded. */
  int (*load_counter)(void* user, uint32_t* value);
  int (*store_counter)(void* user, uint32_t value);
} dsekp_client_io;

/** Topic buffer size: a DSEKP_TOPIC_PREFIX_MAX prefix + "dsekp/init/ack/" + a 64-character dev_id
 *  + NUL fits. */
#define DSEKP_TOPIC_MAX (DSEKP_TOPIC_PREFIX_MAX + 80)

typedef struct dsekp_client {
  dsekp_device device;
  dsekp_client_io io;
  int clockless;
  uint8_t* tx; /* the application's buffer for outgoing frames */
  size_t tx_cap;
  char topics[5][DSEKP_TOPIC_MAX]; /* indexed by dsekp_topic */
} dsekp_client;

/** Initialises the device session (see dsekp_device_init) and records the callbacks and the
 *  transmit buffer, which must hold DSEKP_MAX_INIT_SIZE bytes and the largest DATA frame the
 *  application sends (dsekp_device_max_frame_size(plaintext_len)). */
int dsekp_client_init(dsekp_client* c, const dsekp_device_params* params, const dsekp_client_io* io,
                      uint8_t* tx, size_t tx_cap);

/** Wipes the session's keys (dsekp_device_wipe). */
void dsekp_client_wipe(dsekp_client* c);

/** One of the device's topics, NUL-terminated. */
const char* dsekp_client_topic(const dsekp_client* c, dsekp_topic topic);

/** Call often from the main loop. Starts a handshake when there is no session, when a rekey is
 *  due, or when the outstanding INIT has expired; re-publishes the INIT when due; sends the
 *  empty DATA frame that confirms a new session if that has not gone out yet. Returns DSEKP_OK
 *  or the first error met; a failed publish (DSEKP_CLIENT_ERR_PUBLISH) is retried on the next
 *  call. */
int dsekp_client_poll(dsekp_client* c);

/** Seals `plaintext` and publishes it on dsekp/data. NO_SESSION until the first ACK. */
int dsekp_client_send(dsekp_client* c, const uint8_t* plaintext, size_t len);

/** Hands a received message to the SDK. On the ACK topic: verifies it and, on success, sends the
 *  confirming empty DATA frame (*downlink_len = 0). On the downlink topic: authenticates and
 *  decrypts it into `downlink` (*downlink_len bytes). On the REKEY topic: authenticates the
 *  edge's request (dsekp_device_handle_rekey) and, on success, publishes a new INIT. Other
 *  topics: DSEKP_ERR_INVALID_ARGUMENT. */
int dsekp_client_on_message(dsekp_client* c, const char* topic, const uint8_t* payload, size_t len,
                            uint8_t* downlink, size_t downlink_cap, size_t* downlink_len);

/** Status of a publish callback that returned nonzero (not a core error value). */
#define DSEKP_CLIENT_ERR_PUBLISH 100
/** Status of a clockless device whose counter could not be loaded, advanced or stored. */
#define DSEKP_CLIENT_ERR_STORAGE 101

/** dsekp_device_error_name, plus the two client statuses above. */
const char* dsekp_client_error_name(int status);

#ifdef __cplusplus
}
#endif

#endif /* DSEKP_CLIENT_H */
