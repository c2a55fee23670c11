// DSEKP_Client: the paper's ESP32 client (DHT11 readings every 2 s, encrypted, over MQTT with
// PubSubClient), on the DSEKP device SDK.
//
// Thin glue: everything protocol-related is in the SDK (dsekp_client.h, dsekp_device.h). This
// sketch only connects Wi-Fi, NTP, PubSubClient and the DHT11 to it. CI compiles it unchanged,
// with a header from `dsekp keys add --format header`, for the host against stand-ins for the
// Arduino libraries (run there against a real Mosquitto and edge) and for rv32imc
// (tests/arduino_sketch).
//
// Needs: Arduino-ESP32 3.x (C++20), PubSubClient 2.8, "DHT sensor library" (Adafruit).
// Provisioning: `dsekp keys add <dev_id> --db edge.db --broker HOST:PORT --format header
//   > dsekp_device_config.h` next to this sketch (DEV_ID, DEV_SECRET, EDGE_SALT, broker login).
// With `--ratchet` (DSEKP_RATCHET 1 in the header) the device replaces its secret after every
// session (forward secrecy, PROTOCOL.md 6.6) and keeps it in NVS through Preferences.
#include <DHT.h>
#include <PubSubClient.h>
#include <WiFi.h>
#include <esp_random.h>
#include <string.h>
#include <sys/time.h>

#include "dsekp_client.h"
#include "dsekp_device_config.h"

static const char* kWifiSsid = "your-ssid";
static const char* kWifiPassword = "your-password";
static const uint8_t kDhtPin = 4;
static const uint32_t kReadingIntervalMs = 2000;  // the paper's 2 s interval

static WiFiClient wifi;
static PubSubClient mqtt(wifi);
static DHT dht(kDhtPin, DHT11);
static dsekp_client dsekp;
static uint8_t tx_buffer[512];  // INIT and DATA frames of a 19-byte reading fit

// --- what the SDK takes from the application --------------------------------------------------
static int publish(void*, const char* topic, const uint8_t* payload, size_t len) {
  return mqtt.publish(topic, payload, static_cast<unsigned int>(len)) ? 0 : -1;  // len <= tx_buffer
}
static uint64_t monotonic_ms(void*) {
  return millis();
}
static uint64_t unix_ms(void*) {
  struct timeval tv;
  gettimeofday(&tv, nullptr);
  if (tv.tv_sec < 1700000000) return 0;  // NTP not synchronised yet: no handshake
  return static_cast<uint64_t>(tv.tv_sec) * 1000u + tv.tv_usec / 1000u;
}
static int hardware_random(void*, uint8_t* out, size_t len) {
  esp_fill_random(out, len);  // the ESP32's hardware RNG (RF subsystem on: Wi-Fi is up)
  return 0;
}

#if defined(DSEKP_RATCHET) && DSEKP_RATCHET
#include <Preferences.h>

// The secret, its epoch and the provisioning's generation in one NVS entry: NVS writes an entry
// all or nothing, and putBytes commits it before it returns. NVS does not scrub the entry it
// replaces (PROTOCOL.md's non-claims: storage remanence).
static Preferences nvs;
static dsekp_ratchet ratchet;
static uint8_t stored_secret[32];
// secret (32), epoch (4), DSEKP_REGISTRY_GENERATION (8), big-endian
static const size_t kRecordSize = 44;

static int store_secret(void*, const uint8_t* secret, size_t len, uint32_t epoch) {
  if (len != 32) return -1;
  uint8_t record[kRecordSize];
  memcpy(record, secret, 32);
  for (int i = 0; i < 4; ++i) record[32 + i] = static_cast<uint8_t>(epoch >> (24 - 8 * i));
  const uint64_t generation = DSEKP_REGISTRY_GENERATION;
  for (int i = 0; i < 8; ++i) record[36 + i] = static_cast<uint8_t>(generation >> (56 - 8 * i));
  const size_t written = nvs.putBytes("secret", record, sizeof record);
  dsekp_wipe(record, sizeof record);
  return written == sizeof record ? 0 : -1;
}

// What the device boots from: the stored pair, or the provisioned secret before the first step
// and after a re-provisioning (`dsekp keys rotate` gives a new generation: the stored chain is
// of the old secret).
static void load_secret(dsekp_device_params& params) {
  uint8_t record[kRecordSize];
  uint32_t epoch = 0;
  uint64_t generation = 0;
  bool stored = false;
  if (nvs.begin("dsekp", false) && nvs.isKey("secret")) {
    // An entry that cannot be read whole is not "no entry": falling back to the provisioned
    // secret would lock the device out once the edge has stepped. Stop and say so.
    if (nvs.getBytes("secret", record, sizeof record) != sizeof record) {
      for (;;) {
        Serial.printf("dsekp: the stored secret cannot be read; re-provision the device\n");
        delay(10000);
      }
    }
    stored = true;
  }
  for (int i = 0; stored && i < 8; ++i) generation = generation << 8 | record[36 + i];
  if (stored && generation == DSEKP_REGISTRY_GENERATION) {
    memcpy(stored_secret, record, 32);
    for (int i = 0; i < 4; ++i) epoch = epoch << 8 | record[32 + i];
  } else {
    memcpy(stored_secret, DSEKP_DEV_SECRET, 32);  // first boot, or re-provisioned
  }
  dsekp_wipe(record, sizeof record);
  dsekp_ratchet_init(&ratchet, store_secret, nullptr);
  params.dev_secret = stored_secret;
  params.epoch = epoch;
  params.ratchet = &ratchet;
}
#endif

static void on_message(char* topic, byte* payload, unsigned int len) {
  uint8_t command[64];
  size_t command_len = 0;
  const int rc =
      dsekp_client_on_message(&dsekp, topic, payload, len, command, sizeof command, &command_len);
  if (rc != DSEKP_OK) {
    Serial.printf("dsekp: %s on %s\n", dsekp_client_error_name(rc), topic);
  } else if (command_len > 0) {
    Serial.printf("downlink: %.*s\n", static_cast<int>(command_len), command);
  }
}

static void connect_mqtt() {
  while (!mqtt.connected()) {
    if (mqtt.connect(DSEKP_DEV_ID, DSEKP_BROKER_USERNAME, DSEKP_BROKER_PASSWORD)) {
      mqtt.subscribe(dsekp_client_topic(&dsekp, DSEKP_TOPIC_ACK), 1);
      mqtt.subscribe(dsekp_client_topic(&dsekp, DSEKP_TOPIC_DOWN), 1);
      mqtt.subscribe(dsekp_client_topic(&dsekp, DSEKP_TOPIC_REKEY), 1);
    } else {
      delay(1000);
    }
  }
}

void setup() {
  Serial.begin(115200);
  WiFi.begin(kWifiSsid, kWifiPassword);
  while (WiFi.status() != WL_CONNECTED) delay(250);
  configTime(0, 0, "pool.ntp.org");
  dht.begin();
  mqtt.setServer(DSEKP_BROKER_HOST, DSEKP_BROKER_PORT);
  mqtt.setBufferSize(sizeof tx_buffer + 64);
  mqtt.setCallback(on_message);

  dsekp_device_params params = {};
  params.dev_id = DSEKP_DEV_ID;
  params.dev_secret = DSEKP_DEV_SECRET;
  params.edge_salt = DSEKP_EDGE_SALT;
  params.edge_salt_len = sizeof DSEKP_EDGE_SALT;
  params.encoding = DSEKP_ENCODING_JSON;  // the paper's frames
  params.per_device_topics = DSEKP_PER_DEVICE_TOPICS;  // as `dsekp keys` provisioned it
  params.topic_prefix = DSEKP_TOPIC_PREFIX;            // the deployment's, "" for none
  params.random = hardware_random;
#if defined(DSEKP_RATCHET) && DSEKP_RATCHET
  load_secret(params);
#endif
  const dsekp_client_io io = {nullptr, publish, monotonic_ms, unix_ms, nullptr, nullptr};
  const int rc = dsekp_client_init(&dsekp, &params, &io, tx_buffer, sizeof tx_buffer);
  if (rc != DSEKP_OK) Serial.printf("dsekp init: %s\n", dsekp_client_error_name(rc));
#if defined(DSEKP_RATCHET) && DSEKP_RATCHET
  dsekp_wipe(stored_secret, sizeof stored_secret);  // the SDK holds its own copy
#endif
}

void loop() {
  connect_mqtt();
  mqtt.loop();
  const int rc = dsekp_client_poll(&dsekp);  // handshake, retransmission, rekey
  if (rc != DSEKP_OK) Serial.printf("dsekp: %s\n", dsekp_client_error_name(rc));

  static uint32_t last_reading = 0;
  if (millis() - last_reading < kReadingIntervalMs || !dsekp_device_established(&dsekp.device)) {
    return;
  }
  last_reading = millis();
  const float t = dht.readTemperature(), h = dht.readHumidity();
  if (isnan(t) || isnan(h)) return;
  char reading[32];
  const int n = snprintf(reading, sizeof reading, "{\"t\":%.1f,\"h\":%.1f}", t, h);
  const int sent = dsekp_client_send(&dsekp, reinterpret_cast<const uint8_t*>(reading), n);
  if (sent != DSEKP_OK) Serial.printf("dsekp send: %s\n", dsekp_client_error_name(sent));
}
