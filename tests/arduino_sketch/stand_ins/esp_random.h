// Host stand-in for ESP-IDF's esp_random.h: the host's getrandom(2) in place of the hardware RNG.
#pragma once

#include <stddef.h>
#include <stdint.h>

void esp_fill_random(void* buf, size_t len);
