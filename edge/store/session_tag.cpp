// session_tag (see session_tag.hpp).
#include "edge/store/session_tag.hpp"

#include <openssl/evp.h>

#include <array>

#include "core/hex.hpp"

namespace dsekp::edge {

std::string session_tag(std::string_view label, const DirectionKeys& keys) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const auto key = keys.key.view();
  const auto iv = keys.iv_base.view();
  const bool ok = ctx != nullptr && EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1 &&
                  EVP_DigestUpdate(ctx, label.data(), label.size()) == 1 &&
                  EVP_DigestUpdate(ctx, key.data(), key.size()) == 1 &&
                  EVP_DigestUpdate(ctx, iv.data(), iv.size()) == 1 &&
                  EVP_DigestFinal_ex(ctx, digest.data(), &size) == 1;
  EVP_MD_CTX_free(ctx);
  if (!ok || size < kSessionTagChars / 2) return {};
  std::string tag(kSessionTagChars, '0');
  (void)hex::encode(ByteView(digest.data(), kSessionTagChars / 2), tag);  // `tag` has the room
  return tag;
}

}  // namespace dsekp::edge
