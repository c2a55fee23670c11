/* The device SDK used from C (compiled as C11, not C++): proves dsekp_device.h and
 * dsekp_client.h are C headers, and runs a handshake start with them. Called by
 * sdk_c_api_test.cpp (DeviceApiC.UsableFromC). */
#include <stdint.h>
#include <string.h>

#include "dsekp_client.h"
#include "dsekp_device.h"

/* NOT CRYPTOGRAPHIC: a fixed byte pattern, for this smoke test only. */
static int pattern_random(void* user, uint8_t* out, size_t len) {
  (void)user;
  for (size_t i = 0; i < len; ++i) out[i] = (uint8_t)(0xA5u ^ i);
  return 0;
}

int dsekp_sdk_c_smoke(void) {
  static const uint8_t secret[32] = {1, 2, 3};
  static const uint8_t salt[16] = {4, 5, 6};
  dsekp_device_params params;
  memset(&params, 0, sizeof params);
  params.dev_id = "c-device.1";
  params.dev_secret = secret;
  params.edge_salt = salt;
  params.edge_salt_len = sizeof salt;
  params.encoding = DSEKP_ENCODING_COMPACT;
  params.random = pattern_random;

  static dsekp_device dev; /* static: how firmware would hold it */
  /* An encoding outside the enum (C lets any int through) is refused, not taken for JSON. */
  params.encoding = (dsekp_encoding)2;
  if (dsekp_device_init(&dev, &params) != DSEKP_ERR_INVALID_ARGUMENT) return 9;
  params.encoding = DSEKP_ENCODING_COMPACT;
  if (dsekp_device_init(&dev, &params) != DSEKP_OK) return 1;
  uint8_t init[DSEKP_MAX_INIT_SIZE];
  size_t n = 0;
  if (dsekp_device_begin_session(&dev, 1800000000u, init, sizeof init, &n) != DSEKP_OK) return 2;
  if (n == 0 || init[0] != 0x01) return 3; /* the compact INIT's type byte */
  if (!dsekp_device_handshake_pending(&dev) || dsekp_device_established(&dev)) return 4;
  char topic[DSEKP_TOPIC_MAX];
  if (dsekp_device_topic(&dev, DSEKP_TOPIC_ACK, topic, sizeof topic) == 0 ||
      strcmp(topic, "dsekp/init/ack/c-device.1") != 0) {
    return 5;
  }
  if (dsekp_device_topic(&dev, (dsekp_topic)7, topic, sizeof topic) != 0) return 6; /* unknown */
  if (strcmp(dsekp_device_error_name(DSEKP_ERR_NO_SESSION), "no_session") != 0) return 6;
  uint8_t frame[512];
  if (dsekp_device_seal(&dev, (const uint8_t*)"x", 1, 0, frame, sizeof frame, &n) !=
      DSEKP_ERR_NO_SESSION) {
    return 7;
  }
  dsekp_device_wipe(&dev);
  return dsekp_device_established(&dev) == 0 ? 0 : 8;
}
