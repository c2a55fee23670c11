// DSEKP v1 key schedule and handshake transcripts (formulas in key_schedule.hpp / PROTOCOL.md).
#include "dsekp/key_schedule.hpp"

#include <array>
#include <cstring>

namespace dsekp {
namespace {

ByteView label_bytes(std::string_view label) noexcept {
  return ByteView(reinterpret_cast<const std::uint8_t*>(label.data()), label.size());
}

// u8 len || dev_id, the length-prefixed form used in every transcript and info string.
struct LengthPrefixedDevId {
  std::array<std::uint8_t, 1> length;
  ByteView bytes;
  explicit LengthPrefixedDevId(const DevId& dev_id) noexcept
      : length{static_cast<std::uint8_t>(dev_id.size())}, bytes(dev_id.view()) {}
};

// Truncates HMAC output to a 16-byte proof.
Proof truncate_to_proof(const Sha256Digest& digest) noexcept {
  return Proof::from(digest.view().first<kProofSize>());
}

}  // namespace

Error derive_handshake_keys(CryptoBackend& crypto, const DevSecret& dev_secret,
                            const EdgeSalt& edge_salt, const InitParams& init,
                            HandshakeKeys& out) noexcept {
  if (init.dev_id == nullptr || edge_salt.view().empty()) return Error::invalid_argument;
  std::array<std::uint8_t, 2> sessctr{};
  std::array<std::uint8_t, 4> t{};
  store_be16(sessctr.data(), init.sessctr);
  store_be32(t.data(), init.t);

  // IKM = DEV_SECRET || DevNonce || SessCtr || T  (paper, Algorithm 1)
  const std::array<ByteView, 4> ikm{dev_secret.view(), init.dev_nonce.view(), ByteView(sessctr),
                                    ByteView(t)};
  Prk prk;  // PRK = HKDF-Extract(EDGE_SALT, IKM)
  if (Error e = crypto.hkdf_extract(edge_salt.view(), ikm, prk.mutable_view()); e != Error::ok)
    return e;

  // SS = HKDF-Expand(PRK, "DSEKP1 session" || u8 len || dev_id, 32)
  const LengthPrefixedDevId id(*init.dev_id);
  const std::array<ByteView, 3> session_info{label_bytes(kLabelSession), ByteView(id.length),
                                             id.bytes};
  if (Error e = crypto.hkdf_expand(prk.view(), session_info, out.session_secret.mutable_view());
      e != Error::ok)
    return e;

  // K_init = HKDF-Expand(SS, "DSEKP1 init", 32); K_ack = HKDF-Expand(SS, "DSEKP1 ack", 32)
  const std::array<ByteView, 1> init_info{label_bytes(kLabelInitKey)};
  const std::array<ByteView, 1> ack_info{label_bytes(kLabelAckKey)};
  if (Error e = crypto.hkdf_expand(out.session_secret.view(), init_info, out.k_init.mutable_view());
      e != Error::ok)
    return e;
  return crypto.hkdf_expand(out.session_secret.view(), ack_info, out.k_ack.mutable_view());
}

Error compute_init_proof(CryptoBackend& crypto, const ProofKey& k_init, const InitParams& init,
                         Proof& out) noexcept {
  if (init.dev_id == nullptr) return Error::invalid_argument;
  std::array<std::uint8_t, 6> sessctr_t{};
  store_be16(sessctr_t.data(), init.sessctr);
  store_be32(sessctr_t.data() + 2, init.t);
  const LengthPrefixedDevId id(*init.dev_id);
  // "DSEKP1 INIT" || u8 len || dev_id || u16 sessctr || u32 t || dev_nonce
  const std::array<ByteView, 5> transcript{label_bytes(kLabelInitProof), ByteView(id.length),
                                           id.bytes, ByteView(sessctr_t), init.dev_nonce.view()};
  Sha256Digest mac;
  if (Error e = crypto.hmac_sha256(k_init.view(), transcript, mac); e != Error::ok) return e;
  out = truncate_to_proof(mac);
  secure_wipe(mac.mutable_view());  // the untruncated MAC is not needed by anyone
  return Error::ok;
}

Error compute_ack_proof(CryptoBackend& crypto, const ProofKey& k_ack, const Proof& init_proof,
                        const EdgeNonce& edge_nonce, std::uint8_t status, Proof& out) noexcept {
  const std::array<std::uint8_t, 1> status_byte{status};
  // "DSEKP1 ACK" || init proof || edge_nonce || u8 status: binds the ACK to exactly one INIT.
  const std::array<ByteView, 4> transcript{label_bytes(kLabelAckProof), init_proof.view(),
                                           edge_nonce.view(), ByteView(status_byte)};
  Sha256Digest mac;
  if (Error e = crypto.hmac_sha256(k_ack.view(), transcript, mac); e != Error::ok) return e;
  out = truncate_to_proof(mac);
  secure_wipe(mac.mutable_view());  // the untruncated MAC is not needed by anyone
  return Error::ok;
}

namespace {

// HKDF-Expand(prk, label || u8 len || dev_id, N).
Error expand_labelled(CryptoBackend& crypto, const Prk& prk, std::string_view label,
                      const DevId& dev_id, MutableByteView out) noexcept {
  const LengthPrefixedDevId id(dev_id);
  const std::array<ByteView, 3> info{label_bytes(label), ByteView(id.length), id.bytes};
  return crypto.hkdf_expand(prk.view(), info, out);
}

// The ratchet step from `current`: the next secret into `next` and, if asked, K_rekey of
// `current` into `rekey_key`, from the one extraction they share: HKDF-Extract(EDGE_SALT, S), a
// separate one from the session's (whose IKM also has the INIT's nonce, sessctr and t), so
// neither shares an output with a session key; no session input, so an edge that lost its state
// can step forward from an older secret.
Error step_secret(CryptoBackend& crypto, const DevSecret& current, const EdgeSalt& edge_salt,
                  const DevId& dev_id, DevSecret& next, ProofKey* rekey_key) noexcept {
  if (edge_salt.view().empty() || dev_id.size() == 0) return Error::invalid_argument;
  const std::array<ByteView, 1> ikm{current.view()};
  Prk prk;
  if (Error e = crypto.hkdf_extract(edge_salt.view(), ikm, prk.mutable_view()); e != Error::ok)
    return e;
  if (Error e = expand_labelled(crypto, prk, kLabelRatchet, dev_id, next.mutable_view());
      e != Error::ok)
    return e;
  if (rekey_key == nullptr) return Error::ok;
  return expand_labelled(crypto, prk, kLabelRekeyKey, dev_id, rekey_key->mutable_view());
}

}  // namespace

Error derive_rekey_key(CryptoBackend& crypto, const DevSecret& dev_secret,
                       const EdgeSalt& edge_salt, const DevId& dev_id, ProofKey& out) noexcept {
  // On every device's path (REKEY requests): written out rather than through the helpers above,
  // which only the ratchet needs and which would otherwise be linked into every firmware.
  if (edge_salt.view().empty() || dev_id.size() == 0) return Error::invalid_argument;
  const std::array<ByteView, 1> ikm{dev_secret.view()};
  Prk prk;
  if (Error e = crypto.hkdf_extract(edge_salt.view(), ikm, prk.mutable_view()); e != Error::ok)
    return e;
  const LengthPrefixedDevId id(dev_id);
  const std::array<ByteView, 3> info{label_bytes(kLabelRekeyKey), ByteView(id.length), id.bytes};
  return crypto.hkdf_expand(prk.view(), info, out.mutable_view());
}

Error derive_next_secret(CryptoBackend& crypto, const DevSecret& current, const EdgeSalt& edge_salt,
                         const DevId& dev_id, DevSecret& out) noexcept {
  // HKDF-Expand is one-way in its key: the new secret tells nothing about the old one.
  DevSecret next;
  if (Error e = step_secret(crypto, current, edge_salt, dev_id, next, nullptr); e != Error::ok)
    return e;
  out = static_cast<DevSecret&&>(next);  // `out` may be `current`: written only now
  return Error::ok;
}

Error derive_ratchet_step(CryptoBackend& crypto, const DevSecret& current,
                          const EdgeSalt& edge_salt, const DevId& dev_id, DevSecret& next,
                          ProofKey& rekey_key) noexcept {
  return step_secret(crypto, current, edge_salt, dev_id, next, &rekey_key);
}

Error compute_rekey_proof(CryptoBackend& crypto, const ProofKey& k_rekey, const DevId& dev_id,
                          std::uint16_t sessctr, std::uint32_t seq, Proof& out) noexcept {
  std::array<std::uint8_t, 6> sessctr_seq{};
  store_be16(sessctr_seq.data(), sessctr);
  store_be32(sessctr_seq.data() + 2, seq);
  const LengthPrefixedDevId id(dev_id);
  // "DSEKP1 REKEY" || u8 len || dev_id || u16 sessctr || u32 seq
  const std::array<ByteView, 4> transcript{label_bytes(kLabelRekeyProof), ByteView(id.length),
                                           id.bytes, ByteView(sessctr_seq)};
  Sha256Digest mac;
  if (Error e = crypto.hmac_sha256(k_rekey.view(), transcript, mac); e != Error::ok) return e;
  out = truncate_to_proof(mac);
  secure_wipe(mac.mutable_view());
  return Error::ok;
}

Error rekey_request_proof(CryptoBackend& crypto, const DevSecret& dev_secret,
                          const EdgeSalt& edge_salt, const RekeyFrame& request,
                          Proof& out) noexcept {
  ProofKey k_rekey;  // wiped on return
  if (Error e = derive_rekey_key(crypto, dev_secret, edge_salt, request.dev_id, k_rekey);
      e != Error::ok)
    return e;
  return compute_rekey_proof(crypto, k_rekey, request.dev_id, request.sessctr, request.seq, out);
}

Error derive_traffic_keys(CryptoBackend& crypto, const SessionSecret& session_secret,
                          const EdgeNonce& edge_nonce, TrafficKeys& out) noexcept {
  // TS = HKDF-Extract(salt = EdgeNonce, IKM = SS): the edge's fresh nonce makes every session's
  // traffic keys new even if an old INIT is replayed.
  const std::array<ByteView, 1> ikm{session_secret.view()};
  Prk traffic_secret;
  if (Error e = crypto.hkdf_extract(edge_nonce.view(), ikm, traffic_secret.mutable_view());
      e != Error::ok)
    return e;

  std::array<std::uint8_t, kAeadKeySize + kNonceSize> okm{};
  const auto expand_direction = [&](std::string_view label, DirectionKeys& keys) noexcept {
    const std::array<ByteView, 1> info{label_bytes(label)};
    Error e = crypto.hkdf_expand(traffic_secret.view(), info, MutableByteView(okm));
    if (e == Error::ok) {
      const std::span<const std::uint8_t, kAeadKeySize + kNonceSize> material(okm);
      keys.key = AeadKey::from(material.first<kAeadKeySize>());
      keys.iv_base = IvBase::from(material.last<kNonceSize>());
    }
    secure_wipe(MutableByteView(okm));
    return e;
  };
  // K_up || IV_up = HKDF-Expand(TS, "DSEKP1 up", 28); K_down || IV_down likewise with "down".
  if (Error e = expand_direction(kLabelUp, out.up); e != Error::ok) return e;
  return expand_direction(kLabelDown, out.down);
}

AeadNonce make_nonce(const IvBase& iv_base, std::uint32_t seq) noexcept {
  // nonce = IV_base XOR (0x00000000 || u64 seq); seq has 32 bits, so only the last four bytes
  // change. Written out byte by byte: this runs for every frame sealed or opened.
  static_assert(AeadNonce::size() == 12);
  AeadNonce nonce = AeadNonce::from(iv_base.view());
  std::uint8_t* n = nonce.mutable_view().data();
  n[8] ^= static_cast<std::uint8_t>(seq >> 24);
  n[9] ^= static_cast<std::uint8_t>(seq >> 16);
  n[10] ^= static_cast<std::uint8_t>(seq >> 8);
  n[11] ^= static_cast<std::uint8_t>(seq);
  return nonce;
}

std::size_t data_aad_size(const DevId& dev_id) noexcept {
  return kLabelDataAad.size() + 1 + dev_id.size() + 2 + 4 + 8;
}

std::size_t build_data_aad(Direction direction, const DevId& dev_id, std::uint16_t sessctr,
                           std::uint32_t seq, std::uint64_t sendts_ms,
                           MutableByteView out) noexcept {
  static_assert(kLabelDataAad.size() == kLabelDownAad.size());
  const std::size_t size = data_aad_size(dev_id);
  if (out.size() < size) return 0;
  const std::string_view label = direction == Direction::uplink ? kLabelDataAad : kLabelDownAad;
  std::uint8_t* p = out.data();
  std::memcpy(p, label.data(), label.size());
  p += label.size();
  *p++ = static_cast<std::uint8_t>(dev_id.size());
  std::memcpy(p, dev_id.view().data(), dev_id.size());
  p += dev_id.size();
  store_be16(p, sessctr);
  store_be32(p + 2, seq);
  store_be64(p + 6, sendts_ms);
  return size;
}

}  // namespace dsekp
