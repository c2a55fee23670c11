// Host stand-in for PubSubClient 2.8 (knolleary): the calls DSEKP_Client.ino makes, with the same
// signatures and the same limits, over libmosquitto to a real broker. As in PubSubClient: MQTT
// 3.1.1, publishes at QoS 0, subscriptions at QoS 0 or 1, and one buffer of setBufferSize() bytes
// (default 256) that a publish must fit (5 header bytes + 2 + topic + payload) and that an
// incoming message larger than it is dropped for. loop() waits up to 10 ms for the network.
//
// The broker is the sketch's setServer() host and port; SKETCH_BROKER_PORT in the environment
// replaces the port (the test's broker listens on a free port, the header names 1883).
#pragma once

#if __has_include(<functional>)
#include <functional>
#endif

#include "Arduino.h"
#include "WiFi.h"

struct mosquitto;
struct mosquitto_message;

class PubSubClient {
 public:
  // As PubSubClient on ESP32: a std::function where the C++ library has one (not on a bare-metal
  // toolchain without libstdc++, where the sketch is only compiled).
#if __has_include(<functional>)
  using Callback = std::function<void(char* topic, uint8_t* payload, unsigned int length)>;
#else
  using Callback = void (*)(char* topic, uint8_t* payload, unsigned int length);
#endif

  explicit PubSubClient(WiFiClient& client);
  ~PubSubClient();
  PubSubClient(const PubSubClient&) = delete;
  PubSubClient& operator=(const PubSubClient&) = delete;

  PubSubClient& setServer(const char* host, uint16_t port);
  PubSubClient& setCallback(Callback callback);
  boolean setBufferSize(uint16_t size);
  boolean connect(const char* id, const char* user, const char* pass);
  boolean connected();
  boolean publish(const char* topic, const uint8_t* payload, unsigned int length);
  boolean subscribe(const char* topic, uint8_t qos);
  boolean loop();

 private:
  static void on_message(mosquitto*, void* self, const mosquitto_message* message);

  mosquitto* mosq_ = nullptr;
  const char* host_ = nullptr;
  uint16_t port_ = 1883;
  uint16_t buffer_size_ = 256;
  Callback callback_;
  bool connected_ = false;
};
