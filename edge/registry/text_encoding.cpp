// Hex and base64 spellings (see text_encoding.hpp). Base64 is OpenSSL's EVP_EncodeBlock, which
// writes exactly the padded, unwrapped form.
#include "text_encoding.hpp"

#include <openssl/evp.h>

#include "core/hex.hpp"

namespace dsekp::edge {

std::string to_hex(ByteView bytes) {
  std::string out(2 * bytes.size(), '\0');
  (void)hex::encode(bytes, out);  // `out` has the room
  return out;
}

std::string to_base64(ByteView bytes) {
  // EVP_EncodeBlock writes 4 characters per started 3 bytes and a terminating NUL.
  std::string out((bytes.size() + 2) / 3 * 4 + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes.data(),
                                static_cast<int>(bytes.size()));
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return out;
}

}  // namespace dsekp::edge
