// Host stand-in for the Arduino core: only what firmware/examples/DSEKP_Client uses, so that the
// sketch compiles unchanged on the build machine (tests/arduino_sketch). millis() counts from the
// start of the process, as the real one counts from boot; Serial writes to stdout.
#pragma once

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

using byte = uint8_t;
using boolean = bool;

uint32_t millis();
void delay(uint32_t ms);

class HardwareSerial {
 public:
  void begin(unsigned long baud);
  int printf(const char* format, ...) __attribute__((format(printf, 2, 3)));
};
extern HardwareSerial Serial;

// Arduino-ESP32's SNTP set-up (esp32-hal-time.c); the host's clock is already set.
void configTime(long gmt_offset_s, int daylight_offset_s, const char* server);
