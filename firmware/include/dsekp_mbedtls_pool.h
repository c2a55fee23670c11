/* Introspection of the static pool that serves mbedTLS's allocations on bare-metal builds
 * (firmware/src/dsekp_mbedtls_pool.c). For footprint reports and tests; applications need not
 * call any of it. */
#ifndef DSEKP_MBEDTLS_POOL_H
#define DSEKP_MBEDTLS_POOL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes of RAM the pool takes (DSEKP_MBEDTLS_POOL_SETS sets of three blocks: an AES context,
 *  a SHA-256 context, the HMAC pads). */
size_t dsekp_mbedtls_pool_bytes(void);
/** Number of blocks (3 per set; one set serves one device session). */
size_t dsekp_mbedtls_pool_blocks(void);
/** Most blocks ever in use at once. */
size_t dsekp_mbedtls_pool_high_water(void);

#ifdef __cplusplus
}
#endif

#endif /* DSEKP_MBEDTLS_POOL_H */
