// Small OpenSSL helpers for the TLS handshake benchmark: owning pointers and error-queue draining.
//
// Why: every OpenSSL object must be freed exactly once (the benchmark is checked under valgrind),
// including on the error paths of setup code that throws; unique_ptr with the matching *_free
// function makes that automatic. Errors are drained into strings so that a failed handshake is
// reported with OpenSSL's reason and does not leave stale entries for the next handshake.
#pragma once

#include <memory>
#include <string>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace dsekp::bench::detail {

template <typename T, void (*Free)(T*)>
struct OsslDeleter {
  void operator()(T* p) const { Free(p); }
};

using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, OsslDeleter<EVP_PKEY, EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, OsslDeleter<X509, X509_free>>;
using SslCtxPtr = std::unique_ptr<SSL_CTX, OsslDeleter<SSL_CTX, SSL_CTX_free>>;
using SslPtr = std::unique_ptr<SSL, OsslDeleter<SSL, SSL_free>>;
using SslSessionPtr = std::unique_ptr<SSL_SESSION, OsslDeleter<SSL_SESSION, SSL_SESSION_free>>;

// Returns the queued OpenSSL errors as "reason; reason" and empties the queue.
inline std::string drain_openssl_errors() {
  std::string out;
  char buf[256];
  for (unsigned long e = ERR_get_error(); e != 0; e = ERR_get_error()) {
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? std::string("no OpenSSL error queued") : out;
}

}  // namespace dsekp::bench::detail
