// Host stand-in for Adafruit's "DHT sensor library": a DHT11 that reads a slowly changing
// temperature and humidity, as a real one on a desk would.
#pragma once

#include <stdint.h>

#define DHT11 11

class DHT {
 public:
  DHT(uint8_t pin, uint8_t type);
  void begin();
  float readTemperature();
  float readHumidity();

 private:
  unsigned reads_ = 0;
};
