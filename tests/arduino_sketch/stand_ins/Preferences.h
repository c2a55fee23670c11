// Host stand-in for Arduino-ESP32's Preferences (NVS): each key one file in SKETCH_NVS_DIR
// (default: the working directory), replaced by a rename so a write is all or nothing, as an NVS
// entry is. Only what the example uses; no C++ library header (the rv32imc build has none).
#pragma once

#include <stddef.h>

class Preferences {
 public:
  bool begin(const char* name, bool read_only = false);
  bool isKey(const char* key);
  size_t getBytes(const char* key, void* buf, size_t max_len);
  size_t putBytes(const char* key, const void* value, size_t len);

 private:
  char namespace_[16] = {};  // NVS namespaces have at most 15 characters
};
