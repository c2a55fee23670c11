/* AES without the decryption direction, for bare-metal builds with
 * firmware/config/dsekp_mbedtls_config.h (MBEDTLS_AES_SETKEY_DEC_ALT, MBEDTLS_AES_DECRYPT_ALT).
 *
 * GCM uses only the block cipher's encryption direction (the counter keystream and the GHASH
 * key), for sealing and opening alike. mbedTLS 2.28 still links the decryption key schedule, the
 * inverse block function and their tables, because its cipher table names them: 2.3 KB of flash
 * on a Cortex-M4. These two definitions replace them and refuse, so a raw AES block decryption,
 * which nothing in DSEKP asks for, fails loudly instead of returning anything. (mbedTLS 3.x has
 * the same trade built in as MBEDTLS_BLOCK_CIPHER_NO_DECRYPT.) */
#include "mbedtls/aes.h"

#if defined(MBEDTLS_AES_SETKEY_DEC_ALT)
int mbedtls_aes_setkey_dec(mbedtls_aes_context* ctx, const unsigned char* key,
                           unsigned int keybits) {
  (void)ctx;
  (void)key;
  (void)keybits;
  return MBEDTLS_ERR_AES_FEATURE_UNAVAILABLE;
}
#endif

#if defined(MBEDTLS_AES_DECRYPT_ALT)
int mbedtls_internal_aes_decrypt(mbedtls_aes_context* ctx, const unsigned char input[16],
                                 unsigned char output[16]) {
  (void)ctx;
  (void)input;
  for (int i = 0; i < 16; ++i) output[i] = 0;
  return MBEDTLS_ERR_AES_FEATURE_UNAVAILABLE;
}
#endif
