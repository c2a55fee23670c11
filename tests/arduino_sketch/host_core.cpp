// The host stand-ins' bodies (stand_ins/*.h) and the Arduino runtime's main(): setup() once, then
// loop() until SKETCH_RUN_MS milliseconds (default 7000) have passed, like a board reset after
// that.
#include <sys/random.h>

#include <chrono>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "stand_ins/Arduino.h"
#include "stand_ins/DHT.h"
#include "stand_ins/Preferences.h"
#include "stand_ins/WiFi.h"
#include "stand_ins/esp_random.h"

void setup();
void loop();

namespace {
const auto kStart = std::chrono::steady_clock::now();
}  // namespace

uint32_t millis() {
  return static_cast<uint32_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now() - kStart)
                                   .count());
}

void delay(uint32_t ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

HardwareSerial Serial;
void HardwareSerial::begin(unsigned long) {}
int HardwareSerial::printf(const char* format, ...) {
  va_list args;
  va_start(args, format);
  const int n = std::vprintf(format, args);
  va_end(args);
  std::fflush(stdout);
  return n;
}

void configTime(long, int, const char*) {}

WiFiClass WiFi;
void WiFiClass::begin(const char*, const char*) {
  begun_ = true;
}
wl_status_t WiFiClass::status() const {
  return begun_ ? WL_CONNECTED : WL_DISCONNECTED;
}

void esp_fill_random(void* buf, size_t len) {
  auto* out = static_cast<uint8_t*>(buf);
  while (len > 0) {
    const ssize_t n = getrandom(out, len, 0);
    if (n <= 0) std::abort();  // no randomness: never go on with a predictable nonce
    out += n;
    len -= static_cast<size_t>(n);
  }
}

DHT::DHT(uint8_t, uint8_t) {}
void DHT::begin() {}
float DHT::readTemperature() {
  return 21.0f + static_cast<float>(reads_++ % 10) / 10.0f;
}
float DHT::readHumidity() {
  return 45.0f;
}

bool Preferences::begin(const char* name, bool) {
  if (std::strlen(name) >= sizeof namespace_) return false;
  std::strcpy(namespace_, name);
  return true;
}

namespace {
std::string nvs_path(const char* name_space, const char* key) {
  const char* dir = std::getenv("SKETCH_NVS_DIR");
  return std::string(dir != nullptr ? dir : ".") + "/" + name_space + "." + key;
}
}  // namespace

bool Preferences::isKey(const char* key) {
  return std::filesystem::exists(nvs_path(namespace_, key));
}

size_t Preferences::getBytes(const char* key, void* buf, size_t max_len) {
  std::ifstream in(nvs_path(namespace_, key), std::ios::binary);
  if (!in) return 0;  // never written
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  if (bytes.empty() || bytes.size() > max_len) return 0;
  std::memcpy(buf, bytes.data(), bytes.size());
  return bytes.size();
}

size_t Preferences::putBytes(const char* key, const void* value, size_t len) {
  const std::string final_path = nvs_path(namespace_, key);
  const std::string temp_path = final_path + ".tmp";
  {
    std::ofstream out(temp_path, std::ios::binary | std::ios::trunc);
    out.write(static_cast<const char*>(value), static_cast<std::streamsize>(len));
    if (!out.flush()) return 0;
  }
  std::error_code error;
  std::filesystem::rename(temp_path, final_path, error);
  return error ? 0 : len;
}

int main() {
  const char* run = std::getenv("SKETCH_RUN_MS");
  const uint32_t run_ms = run != nullptr ? static_cast<uint32_t>(std::stoul(run)) : 7000u;
  setup();
  while (millis() < run_ms) loop();
  std::printf("sketch: stopped after %u ms\n", millis());
  return 0;
}
