/* A static block pool behind mbedTLS's allocator, for bare-metal builds with no heap.
 *
 * Compiled only with firmware/config/dsekp_mbedtls_config.h (MBEDTLS_PLATFORM_CALLOC_MACRO =
 * dsekp_mbedtls_calloc). mbedTLS 2.28 allocates in exactly three places on DSEKP's path, with
 * sizes fixed by its headers: mbedtls_md_setup (one SHA-256 context, then 2 x 64 bytes of HMAC
 * pads) and mbedtls_cipher_setup inside mbedtls_gcm_setkey (the AES context of the backend's
 * one keyed GCM context; the old one is freed first). One MbedtlsCrypto (one device session)
 * therefore holds at most one block of each kind below: a "set". The pool has
 * DSEKP_MBEDTLS_POOL_SETS sets (default 1). A request takes the smallest free block that fits;
 * one that fits none, or finds them all taken, gets NULL, which mbedTLS reports as an allocation
 * failure and the backend as crypto_failure: never a fallback to libc. Not thread-safe (a device
 * session runs on one task). */
#include <stdint.h>
#include <string.h>

#include "dsekp_mbedtls_pool.h"
#include "mbedtls/aes.h"
#include "mbedtls/sha256.h"

#ifndef DSEKP_MBEDTLS_POOL_SETS
#define DSEKP_MBEDTLS_POOL_SETS 1
#endif

#define DSEKP_ROUND8(n) (((n) + 7u) & ~(size_t)7u)
#define AES_BLOCK DSEKP_ROUND8(sizeof(mbedtls_aes_context))
#define SHA_BLOCK DSEKP_ROUND8(sizeof(mbedtls_sha256_context))
#define PAD_BLOCK ((size_t)128) /* HMAC ipad || opad for SHA-256 */
#define BLOCKS_PER_SET 3u
#define BLOCKS (BLOCKS_PER_SET * DSEKP_MBEDTLS_POOL_SETS)

/* One set, laid out in memory as the blocks are numbered within it. */
typedef struct {
  unsigned char aes[AES_BLOCK];
  unsigned char sha[SHA_BLOCK];
  unsigned char pads[PAD_BLOCK];
} pool_set;

static union {
  uint64_t align;
  pool_set sets[DSEKP_MBEDTLS_POOL_SETS];
} pool;
static unsigned char in_use[BLOCKS];
static size_t high_water;

static unsigned char* block_at(size_t i, size_t* size) {
  pool_set* s = &pool.sets[i / BLOCKS_PER_SET];
  switch (i % BLOCKS_PER_SET) {
    case 0:
      *size = AES_BLOCK;
      return s->aes;
    case 1:
      *size = SHA_BLOCK;
      return s->sha;
    default:
      *size = PAD_BLOCK;
      return s->pads;
  }
}

void* dsekp_mbedtls_calloc(size_t nmemb, size_t size) {
  if (nmemb == 0 || size == 0 || nmemb > SIZE_MAX / size) return NULL;
  const size_t bytes = nmemb * size; /* a request larger than every block finds none below */
  size_t best = BLOCKS, best_size = 0, used = 0;
  for (size_t i = 0; i < BLOCKS; ++i) {
    size_t block_size;
    (void)block_at(i, &block_size);
    used += in_use[i];
    if (!in_use[i] && block_size >= bytes && (best == BLOCKS || block_size < best_size)) {
      best = i;
      best_size = block_size;
    }
  }
  if (best == BLOCKS) return NULL;
  in_use[best] = 1;
  if (used + 1 > high_water) high_water = used + 1;
  unsigned char* p = block_at(best, &best_size);
  memset(p, 0, best_size);
  return p;
}

void dsekp_mbedtls_free(void* ptr) {
  if (ptr == NULL) return;
  for (size_t i = 0; i < BLOCKS; ++i) {
    size_t block_size;
    unsigned char* p = block_at(i, &block_size);
    if (ptr == p) {
      /* mbedTLS zeroizes key material before freeing; wiping again costs little. */
      memset(p, 0, block_size);
      in_use[i] = 0;
      return;
    }
  }
  /* Not from this pool: a caller bug. Ignored rather than corrupting the pool. */
}

size_t dsekp_mbedtls_pool_bytes(void) {
  return sizeof pool;
}
size_t dsekp_mbedtls_pool_blocks(void) {
  return BLOCKS;
}
size_t dsekp_mbedtls_pool_high_water(void) {
  return high_water;
}
