/* The footprint image: a firmware-shaped C program that uses only the SDK (dsekp_device.h and
 * dsekp_client.h), the way an application would, with the golden trace's material. Its map file
 * is what scripts/mcu/footprint.py measures (flash and RAM per component, no heap symbols).
 *
 * It also checks itself against the golden trace (INIT, DATA 0 and 1 byte for byte, the downlink
 * plaintext), then repeats a session through the client driver with a recording "MQTT client",
 * and measures the stack each API call really uses by painting the stack below main's frame
 * (printed as "IMAGE stack <call> <bytes>"; the static bound is scripts/mcu/stack_report.py's).
 * Output goes through semihosting; ends with "IMAGE_DONE <checks> failures=<n>".
 * Built twice: on the full device path (sdk_image) and on one built for JSON alone
 * (sdk_image_json, DSEKP_CODEC_NO_COMPACT), which also checks that the compact encoding is
 * refused there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board.h"
#include "dsekp_client.h"
#include "dsekp_device.h"
#include "dsekp_mbedtls_pool.h"
#include "golden_inputs.h"

static int checks, failures;

static void check(int ok, const char* what) {
  ++checks;
  if (!ok) {
    ++failures;
    printf("FAIL %s\n", what);
  }
}

/* Scripted randomness (NOT CRYPTOGRAPHIC, test image only): the golden sessctr and DevNonce,
 * then zeros for retransmission jitter. */
static size_t random_calls;
static int scripted_random(void* user, uint8_t* out, size_t len) {
  (void)user;
  if (random_calls % 3 == 0 && len == 2) {
    out[0] = (uint8_t)(GOLDEN_SESSCTR >> 8);
    out[1] = (uint8_t)GOLDEN_SESSCTR;
  } else if (random_calls % 3 == 1 && len == sizeof golden_dev_nonce) {
    memcpy(out, golden_dev_nonce, len);
  } else if (random_calls % 3 == 2 && len == 4) {
    memset(out, 0, len);
  } else {
    return -1;
  }
  ++random_calls;
  return 0;
}

/* --- stack painting ----------------------------------------------------------------------- */
#define PAINT_BYTES 5120u /* below main's frame (QEMU gives the stack 4 MB of RAM) */
#define PAINT_SKIP 128u   /* left alone: the painting routine's own frame lives there */
#define PAINT_WORD 0xC5AC5A5Au
static uintptr_t paint_top;

static void __attribute__((noinline)) paint(void) {
  volatile uint32_t* p = (volatile uint32_t*)(paint_top - PAINT_SKIP - PAINT_BYTES);
  volatile uint32_t* end = (volatile uint32_t*)(paint_top - PAINT_SKIP);
  while (p < end) *p++ = PAINT_WORD;
}

/* Bytes of stack used below paint_top since the last paint (a lower bound of PAINT_SKIP). */
static unsigned __attribute__((noinline)) used(void) {
  const uint32_t* p = (const uint32_t*)(paint_top - PAINT_SKIP - PAINT_BYTES);
  const uint32_t* end = (const uint32_t*)(paint_top - PAINT_SKIP);
  while (p < end && *p == PAINT_WORD) ++p;
  if (p == (const uint32_t*)(paint_top - PAINT_SKIP - PAINT_BYTES)) return 0xFFFFFFFFu;
  return (unsigned)(paint_top - (uintptr_t)p);
}

static void report_stack(const char* call) {
  const unsigned n = used();
  if (n == 0xFFFFFFFFu) {
    check(0, "stack use stays inside the painted area");
    return;
  }
  printf("IMAGE stack %s %u\n", call, n);
}

/* --- the "MQTT client" of the driver: remembers the last publish ---------------------------- */
static char last_topic[DSEKP_TOPIC_MAX];
static uint8_t last_payload[512];
static size_t last_len, publishes;
static int record_publish(void* user, const char* topic, const uint8_t* payload, size_t len) {
  (void)user;
  if (len > sizeof last_payload || strlen(topic) >= sizeof last_topic) return -1;
  strcpy(last_topic, topic);
  memcpy(last_payload, payload, len);
  last_len = len;
  ++publishes;
  return 0;
}
/* Up for a second (the client's first INIT of a boot waits for that), at the golden `t`. */
#define BOOTED_MS 1000u
static uint64_t fake_now_ms = BOOTED_MS;
static uint64_t monotonic(void* user) {
  (void)user;
  return fake_now_ms;
}
static uint64_t wall_ms(void* user) {
  (void)user;
  return GOLDEN_T * 1000u + fake_now_ms - BOOTED_MS;
}

static dsekp_device device;
static dsekp_client client;
static uint8_t tx[512];
static uint8_t plain[64];

static int same(const uint8_t* a, size_t n, const char* text, size_t text_len) {
  return n == text_len && memcmp(a, text, n) == 0;
}

int main(void) {
  paint_top = board_stack_pointer();
  dsekp_device_params params;
  memset(&params, 0, sizeof params);
  params.dev_id = golden_dev_id;
  params.dev_secret = golden_dev_secret;
  params.edge_salt = golden_edge_salt;
  params.edge_salt_len = sizeof golden_edge_salt;
  params.encoding = DSEKP_ENCODING_JSON;
  params.random = scripted_random;

  /* 1. The device API against the golden trace. */
  size_t n = 0;
  paint();
  check(dsekp_device_init(&device, &params) == DSEKP_OK, "init");
  report_stack("dsekp_device_init");
  paint();
  check(dsekp_device_begin_session(&device, (uint32_t)GOLDEN_T, tx, sizeof tx, &n) == DSEKP_OK,
        "begin_session");
  report_stack("dsekp_device_begin_session");
  check(same(tx, n, golden_init_json, GOLDEN_INIT_JSON_LEN), "INIT = golden init_json");
  paint();
  check(dsekp_device_note_init_sent(&device, 0) == DSEKP_OK, "note_init_sent");
  report_stack("dsekp_device_note_init_sent");
  paint();
  check(dsekp_device_handle_ack(&device, (const uint8_t*)golden_ack_json, GOLDEN_ACK_JSON_LEN) ==
            DSEKP_OK,
        "handle_ack");
  report_stack("dsekp_device_handle_ack");
  paint();
  check(
      dsekp_device_seal(&device, (const uint8_t*)golden_data0_plaintext, GOLDEN_DATA0_PLAINTEXT_LEN,
                        GOLDEN_DATA0_SENDTS_MS, tx, sizeof tx, &n) == DSEKP_OK,
      "seal 0");
  report_stack("dsekp_device_seal");
  check(same(tx, n, golden_data0_json, GOLDEN_DATA0_JSON_LEN), "DATA 0 = golden data0_json");
  check(
      dsekp_device_seal(&device, (const uint8_t*)golden_data1_plaintext, GOLDEN_DATA1_PLAINTEXT_LEN,
                        GOLDEN_DATA1_SENDTS_MS, tx, sizeof tx, &n) == DSEKP_OK,
      "seal 1");
  check(same(tx, n, golden_data1_json, GOLDEN_DATA1_JSON_LEN), "DATA 1 = golden data1_json");
  paint();
  check(dsekp_device_open_downlink(&device, (const uint8_t*)golden_down0_json,
                                   GOLDEN_DOWN0_JSON_LEN, plain, sizeof plain, &n) == DSEKP_OK,
        "open_downlink");
  report_stack("dsekp_device_open_downlink");
  check(same(plain, n, golden_down0_plaintext, GOLDEN_DOWN0_PLAINTEXT_LEN),
        "downlink = golden down0_plaintext");
  dsekp_device_wipe(&device);
  check(dsekp_device_established(&device) == 0, "wiped device has no session");

  /* 2. The same session through the client driver. */
  const dsekp_client_io io = {NULL, record_publish, monotonic, wall_ms, NULL, NULL};
  random_calls = 0;
  paint();
  check(dsekp_client_init(&client, &params, &io, tx, sizeof tx) == DSEKP_OK, "client init");
  report_stack("dsekp_client_init");
  paint();
  check(dsekp_client_poll(&client) == DSEKP_OK, "poll sends INIT");
  report_stack("dsekp_client_poll");
  check(publishes == 1 && strcmp(last_topic, "dsekp/init") == 0 &&
            same(last_payload, last_len, golden_init_json, GOLDEN_INIT_JSON_LEN),
        "client published the golden INIT on dsekp/init");
  paint();
  check(dsekp_client_on_message(&client, dsekp_client_topic(&client, DSEKP_TOPIC_ACK),
                                (const uint8_t*)golden_ack_json, GOLDEN_ACK_JSON_LEN, plain,
                                sizeof plain, &n) == DSEKP_OK,
        "client takes the ACK");
  report_stack("dsekp_client_on_message(ack)");
  check(publishes == 2 && strcmp(last_topic, "dsekp/data") == 0,
        "client confirmed the session with a DATA frame");
  paint();
  check(dsekp_client_send(&client, (const uint8_t*)golden_data0_plaintext,
                          GOLDEN_DATA0_PLAINTEXT_LEN) == DSEKP_OK,
        "client send");
  report_stack("dsekp_client_send");
  check(publishes == 3 && dsekp_device_next_seq(&client.device) == 2, "two DATA frames sent");
  paint();
  check(dsekp_client_on_message(&client, dsekp_client_topic(&client, DSEKP_TOPIC_DOWN),
                                (const uint8_t*)golden_down0_json, GOLDEN_DOWN0_JSON_LEN, plain,
                                sizeof plain, &n) == DSEKP_OK,
        "client opens the downlink");
  report_stack("dsekp_client_on_message(down)");
  check(same(plain, n, golden_down0_plaintext, GOLDEN_DOWN0_PLAINTEXT_LEN), "client downlink");

#ifdef DSEKP_CODEC_NO_COMPACT
  /* 2b. A device path built for JSON alone neither sends nor accepts the compact encoding. */
  {
    dsekp_device_params compact = params;
    compact.encoding = DSEKP_ENCODING_COMPACT;
    check(dsekp_device_init(&device, &compact) == DSEKP_ERR_INVALID_ARGUMENT,
          "JSON-only build: a compact device is refused");
    static const uint8_t compact_frame[] = {0x02, 0x01, 0x00, 0x00};
    check(dsekp_client_on_message(&client, dsekp_client_topic(&client, DSEKP_TOPIC_DOWN),
                                  compact_frame, sizeof compact_frame, plain, sizeof plain,
                                  &n) == DSEKP_ERR_UNKNOWN_FRAME_TYPE,
          "JSON-only build: a compact frame is an unknown frame type");
  }
#endif

  /* 3. The pool is sized for one session: a second one finds it full and fails cleanly (no
   * fallback to a heap), while the first keeps working. */
  check(dsekp_device_init(&device, &params) == DSEKP_ERR_CRYPTO_FAILURE,
        "a second session does not fit the one-session pool");
  check(dsekp_client_send(&client, (const uint8_t*)"{}", 2) == DSEKP_OK,
        "the first session still seals");
  dsekp_client_wipe(&client);

  printf("IMAGE sizeof_dsekp_device %u (state %u)\n", (unsigned)sizeof(dsekp_device),
         (unsigned)dsekp_device_state_size());
  printf("IMAGE sizeof_dsekp_client %u\n", (unsigned)sizeof(dsekp_client));
  printf("IMAGE pool %u bytes in %u blocks, high water %u blocks\n",
         (unsigned)dsekp_mbedtls_pool_bytes(), (unsigned)dsekp_mbedtls_pool_blocks(),
         (unsigned)dsekp_mbedtls_pool_high_water());
  check(dsekp_mbedtls_pool_high_water() <= dsekp_mbedtls_pool_blocks(), "pool never overflowed");
  printf("IMAGE_DONE %d failures=%d\n", checks, failures);
  exit(failures == 0 ? 0 : 1);
}
