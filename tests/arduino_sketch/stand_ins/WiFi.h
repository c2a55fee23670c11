// Host stand-in for Arduino-ESP32's WiFi: the host is always "connected"; a WiFiClient is only
// the handle PubSubClient is built on (the stand-in PubSubClient opens its own socket).
#pragma once

#include "Arduino.h"

enum wl_status_t { WL_IDLE_STATUS = 0, WL_CONNECTED = 3, WL_DISCONNECTED = 6 };

class WiFiClass {
 public:
  void begin(const char* ssid, const char* password);
  wl_status_t status() const;

 private:
  bool begun_ = false;
};
extern WiFiClass WiFi;

class WiFiClient {};
