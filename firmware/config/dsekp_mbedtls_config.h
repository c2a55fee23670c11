/* mbedTLS 2.28 configuration for DSEKP on bare-metal microcontrollers (MBEDTLS_CONFIG_FILE).
 *
 * Only what the device path calls: AES-128 through the cipher layer for GCM, SHA-256 through the
 * MD layer (HMAC; the backend composes HKDF from it, so hkdf.c is not needed) and base64 (the
 * core's JSON codec). Flash savers: the AES tables live in flash (AES_ROM_TABLES) and only one of
 * the four rotated tables is kept (AES_FEWER_TABLES); GCM never decrypts an AES block, so the two
 * _ALT switches let firmware/src/dsekp_mbedtls_aes_nodec.c replace the decryption key schedule
 * and block function (and their tables) with stand-ins that refuse; SHA-256 uses its smaller,
 * slower loop (SHA256_SMALLER).
 *
 * No heap: mbedTLS's own allocations (the MD context set-up and one AES context per keyed GCM
 * context) go to a static block pool in the SDK (firmware/src/dsekp_mbedtls_pool.c) through the
 * compile-time CALLOC/FREE macros, so neither calloc nor free from libc is ever referenced.
 * ESP-IDF and Arduino-ESP32 bring their own mbedTLS configuration; this file is not used there. */
#ifndef DSEKP_MBEDTLS_CONFIG_H
#define DSEKP_MBEDTLS_CONFIG_H

#include <stddef.h>

/* Platform: no OS, no libc allocator, no entropy source (the application supplies randomness). */
#define MBEDTLS_PLATFORM_C
#define MBEDTLS_PLATFORM_MEMORY
#define MBEDTLS_PLATFORM_NO_STD_FUNCTIONS
#define MBEDTLS_PLATFORM_CALLOC_MACRO dsekp_mbedtls_calloc
#define MBEDTLS_PLATFORM_FREE_MACRO dsekp_mbedtls_free
#define MBEDTLS_NO_PLATFORM_ENTROPY

#ifdef __cplusplus
extern "C" {
#endif
void* dsekp_mbedtls_calloc(size_t nmemb, size_t size);
void dsekp_mbedtls_free(void* ptr);
#ifdef __cplusplus
}
#endif

/* Primitives. */
#define MBEDTLS_AES_C
#define MBEDTLS_AES_ROM_TABLES
#define MBEDTLS_AES_FEWER_TABLES
#define MBEDTLS_AES_SETKEY_DEC_ALT
#define MBEDTLS_AES_DECRYPT_ALT
#define MBEDTLS_CIPHER_C
#define MBEDTLS_GCM_C
#define MBEDTLS_MD_C
#define MBEDTLS_SHA256_C
#define MBEDTLS_SHA256_SMALLER
#define MBEDTLS_BASE64_C

#include "mbedtls/check_config.h"

#endif /* DSEKP_MBEDTLS_CONFIG_H */
