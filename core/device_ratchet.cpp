// The device side of the ratchet (see device_ratchet.hpp).
#include "dsekp/device_ratchet.hpp"

#include "dsekp/device_session.hpp"

namespace dsekp {

DeviceRatchet::DeviceRatchet(SecretStore& store) noexcept : store_(store) {}

Error DeviceRatchet::step(CryptoBackend& crypto, DeviceCredentials& credentials) noexcept {
  // The new session's keys came from the current secret; from here on only the next one may
  // exist. It is stored before the session starts (nothing is sent under a session whose step
  // could still be lost), so a reboot finds either the old secret with the edge still on it, or
  // the new one, which the edge reaches by its look-ahead (PROTOCOL.md 6.6).
  if (credentials.epoch == 0xFFFFFFFFu) return Error::session_exhausted;  // re-provision
  DevSecret next;
  ProofKey rekey_key;
  if (Error e = derive_ratchet_step(crypto, credentials.dev_secret, credentials.edge_salt,
                                    credentials.dev_id, next, rekey_key);
      e != Error::ok)
    return e;
  if (!store_.store_secret(next, credentials.epoch + 1)) return Error::secret_store_failed;
  credentials.dev_secret = static_cast<DevSecret&&>(next);  // the old secret is overwritten
  ++credentials.epoch;
  previous_rekey_key_ = static_cast<ProofKey&&>(rekey_key);
  has_previous_rekey_key_ = true;
  return Error::ok;
}

bool DeviceRatchet::is_previous_secrets_request(CryptoBackend& crypto,
                                                const RekeyFrame& request) noexcept {
  if (!has_previous_rekey_key_) return false;
  Proof expected;
  return compute_rekey_proof(crypto, previous_rekey_key_, request.dev_id, request.sessctr,
                             request.seq, expected) == Error::ok &&
         expected.equals(request.proof);
}

}  // namespace dsekp
