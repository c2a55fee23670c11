// Generates the benchmark server's ECDSA P-256 key and self-signed certificate in memory.
//
// Why: the certificate-mode handshake needs a real P-256 signature and a certificate the client
// can verify against a trust anchor; generating it at start-up keeps the benchmark self-contained.
#include "tls_credentials.hpp"

#include <stdexcept>

#include <openssl/x509v3.h>

namespace dsekp::bench::detail {
namespace {

[[noreturn]] void fail(const char* what) {
  throw std::runtime_error(std::string("TLS bench credentials: ") + what + ": " +
                           drain_openssl_errors());
}

void add_extension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  // Self-signed: the certificate is its own issuer.
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) fail("X509V3_EXT_conf_nid");
  const int ok = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  if (ok != 1) fail("X509_add_ext");
}

}  // namespace

TlsServerCredentials make_self_signed_p256(const std::string& common_name) {
  TlsServerCredentials creds;
  creds.key.reset(EVP_EC_gen("P-256"));
  if (!creds.key) fail("EVP_EC_gen(P-256)");

  creds.cert.reset(X509_new());
  X509* cert = creds.cert.get();
  if (cert == nullptr) fail("X509_new");
  if (X509_set_version(cert, X509_VERSION_3) != 1) fail("X509_set_version");
  if (ASN1_INTEGER_set(X509_get_serialNumber(cert), 1) != 1) fail("serial");
  // Valid from now for one day: the benchmark only lives for seconds.
  if (X509_gmtime_adj(X509_getm_notBefore(cert), 0) == nullptr ||
      X509_gmtime_adj(X509_getm_notAfter(cert), 24L * 60 * 60) == nullptr) {
    fail("validity");
  }
  X509_NAME* name = X509_get_subject_name(cert);
  if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                 reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                                 -1, 0) != 1) {
    fail("subject CN");
  }
  if (X509_set_issuer_name(cert, name) != 1) fail("issuer");
  if (X509_set_pubkey(cert, creds.key.get()) != 1) fail("X509_set_pubkey");

  // A plain end-entity server certificate: no CA bit, usable for TLS server authentication.
  add_extension(cert, NID_basic_constraints, "critical,CA:FALSE");
  add_extension(cert, NID_key_usage, "critical,digitalSignature");
  add_extension(cert, NID_ext_key_usage, "serverAuth");
  add_extension(cert, NID_subject_alt_name, ("DNS:" + common_name).c_str());

  if (X509_sign(cert, creds.key.get(), EVP_sha256()) <= 0) fail("X509_sign");
  return creds;
}

}  // namespace dsekp::bench::detail
