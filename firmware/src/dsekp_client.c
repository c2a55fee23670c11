/* The main-loop driver of the device SDK (dsekp_client.h), in plain C over dsekp_device.h. */
#include "dsekp_client.h"

#include <string.h>

static int publish_tx(dsekp_client* c, dsekp_topic topic, size_t len) {
  return c->io.publish(c->io.user, c->topics[topic], c->tx, len) == 0 ? DSEKP_OK
                                                                      : DSEKP_CLIENT_ERR_PUBLISH;
}

static uint64_t unix_ms(const dsekp_client* c) {
  return c->io.unix_ms != NULL ? c->io.unix_ms(c->io.user) : 0;
}

/* The INIT's `t`: Unix seconds, or for a clockless device the persisted counter advanced and
 * stored before use, so a reboot can never send a smaller one. The edge refuses a `t` that is
 * not greater than the last one it accepted (PROTOCOL.md 6.2 step 5); within a boot the session
 * advances it, and across a reboot the first INIT waits until the device has been up for a
 * second, so its second is later than that of any INIT sent before the reboot. */
static int next_t(dsekp_client* c, uint32_t* t) {
  if (!c->clockless) {
    const uint64_t now = unix_ms(c);
    if (now == 0) return DSEKP_ERR_NO_SESSION; /* no wall clock yet: the caller waits */
    if (c->io.monotonic_ms(c->io.user) < 1000u) return DSEKP_ERR_NO_SESSION; /* wait it out */
    *t = (uint32_t)(now / 1000u);
    return DSEKP_OK;
  }
  uint32_t counter = 0;
  if (c->io.load_counter == NULL || c->io.store_counter == NULL ||
      c->io.load_counter(c->io.user, &counter) != 0 || counter == 0xFFFFFFFFu ||
      c->io.store_counter(c->io.user, counter + 1u) != 0) {
    return DSEKP_CLIENT_ERR_STORAGE;
  }
  *t = counter + 1u;
  return DSEKP_OK;
}

static int send_init(dsekp_client* c, int fresh) {
  size_t len = 0;
  int rc;
  if (fresh) {
    uint32_t t = 0;
    rc = next_t(c, &t);
    if (rc == DSEKP_ERR_NO_SESSION) return DSEKP_OK; /* waiting for the clock is not an error */
    if (rc != DSEKP_OK) return rc;
    rc = dsekp_device_begin_session(&c->device, t, c->tx, c->tx_cap, &len);
  } else {
    rc = dsekp_device_current_init(&c->device, c->tx, c->tx_cap, &len);
  }
  if (rc != DSEKP_OK) return rc;
  rc = publish_tx(c, DSEKP_TOPIC_INIT, len);
  if (rc != DSEKP_OK) return rc; /* not noted as sent: still due on the next poll */
  return dsekp_device_note_init_sent(&c->device, c->io.monotonic_ms(c->io.user));
}

int dsekp_client_init(dsekp_client* c, const dsekp_device_params* params, const dsekp_client_io* io,
                      uint8_t* tx, size_t tx_cap) {
  if (c == NULL || params == NULL || io == NULL || io->publish == NULL ||
      io->monotonic_ms == NULL || tx == NULL || tx_cap < DSEKP_MAX_INIT_SIZE) {
    return DSEKP_ERR_INVALID_ARGUMENT;
  }
  if (params->clockless ? (io->load_counter == NULL || io->store_counter == NULL)
                        : io->unix_ms == NULL) {
    return DSEKP_ERR_INVALID_ARGUMENT;
  }
  memset(c, 0, sizeof *c);
  const int rc = dsekp_device_init(&c->device, params);
  if (rc != DSEKP_OK) return rc;
  c->io = *io;
  c->clockless = params->clockless != 0;
  c->tx = tx;
  c->tx_cap = tx_cap;
  for (int topic = DSEKP_TOPIC_INIT; topic <= DSEKP_TOPIC_REKEY; ++topic) {
    if (dsekp_device_topic(&c->device, (dsekp_topic)topic, c->topics[topic], DSEKP_TOPIC_MAX) ==
        0) {
      dsekp_device_wipe(&c->device);
      return DSEKP_ERR_INVALID_ARGUMENT;
    }
  }
  return DSEKP_OK;
}

void dsekp_client_wipe(dsekp_client* c) {
  if (c != NULL) dsekp_device_wipe(&c->device);
}

const char* dsekp_client_topic(const dsekp_client* c, dsekp_topic topic) {
  if (c == NULL || (int)topic < DSEKP_TOPIC_INIT || (int)topic > DSEKP_TOPIC_REKEY) return "";
  return c->topics[topic];
}

int dsekp_client_poll(dsekp_client* c) {
  if (c == NULL) return DSEKP_ERR_INVALID_ARGUMENT;
  const uint64_t now = c->io.monotonic_ms(c->io.user);
  dsekp_device* d = &c->device;
  if (dsekp_device_handshake_pending(d)) {
    if (dsekp_device_handshake_expired(d, now)) return send_init(c, 1);
    if (dsekp_device_retransmit_due(d, now)) return send_init(c, 0);
  } else if (!dsekp_device_established(d) || dsekp_device_rekey_due_at(d, now)) {
    return send_init(c, 1);
  }
  if (dsekp_device_established(d) && dsekp_device_confirmation_pending(d)) {
    return dsekp_client_send(c, NULL, 0);
  }
  return DSEKP_OK;
}

int dsekp_client_send(dsekp_client* c, const uint8_t* plaintext, size_t len) {
  if (c == NULL) return DSEKP_ERR_INVALID_ARGUMENT;
  size_t out = 0;
  const int rc = dsekp_device_seal(&c->device, plaintext, len, unix_ms(c), c->tx, c->tx_cap, &out);
  if (rc != DSEKP_OK) return rc;
  return publish_tx(c, DSEKP_TOPIC_DATA, out);
}

int dsekp_client_on_message(dsekp_client* c, const char* topic, const uint8_t* payload, size_t len,
                            uint8_t* downlink, size_t downlink_cap, size_t* downlink_len) {
  if (c == NULL || topic == NULL || downlink_len == NULL) return DSEKP_ERR_INVALID_ARGUMENT;
  *downlink_len = 0;
  if (strcmp(topic, c->topics[DSEKP_TOPIC_ACK]) == 0) {
    const int rc = dsekp_device_handle_ack(&c->device, payload, len);
    if (rc != DSEKP_OK) return rc;
    /* Key confirmation (PROTOCOL.md 6.1 step 4): the edge sends downlink only once it has seen
     * a frame under the new session. If this publish fails, dsekp_client_poll retries it. */
    return dsekp_client_send(c, NULL, 0);
  }
  if (strcmp(topic, c->topics[DSEKP_TOPIC_DOWN]) == 0) {
    return dsekp_device_open_downlink(&c->device, payload, len, downlink, downlink_cap,
                                      downlink_len);
  }
  if (strcmp(topic, c->topics[DSEKP_TOPIC_REKEY]) == 0) {
    const int rc =
        dsekp_device_handle_rekey(&c->device, payload, len, c->io.monotonic_ms(c->io.user));
    if (rc != DSEKP_OK) return rc;
    /* The edge holds no session of ours: every frame until the new ACK would be refused. If
     * this fails, dsekp_client_poll starts the handshake (rekey_due stays set until then). */
    return send_init(c, 1);
  }
  return DSEKP_ERR_INVALID_ARGUMENT;
}

const char* dsekp_client_error_name(int status) {
  if (status == DSEKP_CLIENT_ERR_PUBLISH) return "publish_failed";
  if (status == DSEKP_CLIENT_ERR_STORAGE) return "counter_storage_failed";
  return dsekp_device_error_name(status);
}
