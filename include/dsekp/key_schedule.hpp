// The DSEKP v1 key schedule and transcripts (docs/PROTOCOL.md, "Key schedule").
//
//   IKM    = DEV_SECRET || DevNonce || u16 SessCtr || u32 T
//   PRK    = HKDF-Extract(EDGE_SALT, IKM)
//   SS     = HKDF-Expand(PRK, "DSEKP1 session" || u8 len || dev_id, 32)
//   K_init = HKDF-Expand(SS, "DSEKP1 init", 32)        K_ack = HKDF-Expand(SS, "DSEKP1 ack", 32)
//   TS     = HKDF-Extract(EdgeNonce, SS)
//   K_up || IV_up     = HKDF-Expand(TS, "DSEKP1 up", 28)
//   K_down || IV_down = HKDF-Expand(TS, "DSEKP1 down", 28)
//   K_rekey = HKDF-Expand(HKDF-Extract(EDGE_SALT, DEV_SECRET), "DSEKP1 rekey" || u8 len || dev_id,
//             32)                                   (v1.1: REKEY requests, no session needed)
//   S_next  = HKDF-Expand(HKDF-Extract(EDGE_SALT, S), "DSEKP1 ratchet" || u8 len || dev_id, 32)
//                                                   (v1.2: the ratchet of a device's secret S)
// Every function here is pure: inputs in, outputs out, no state, no clock, no RNG.
#pragma once

#include <cstdint>

#include "dsekp/bytes.hpp"
#include "dsekp/crypto.hpp"
#include "dsekp/error.hpp"
#include "dsekp/frames.hpp"
#include "dsekp/spec.hpp"

namespace dsekp {

/// Secrets of one handshake (both sides derive them from the INIT fields).
struct HandshakeKeys {
  SessionSecret session_secret;  // SS
  ProofKey k_init;
  ProofKey k_ack;
};

/// One direction's AEAD key and IV base.
struct DirectionKeys {
  AeadKey key;
  IvBase iv_base;
};

/// Both directions' traffic keys of a session.
struct TrafficKeys {
  DirectionKeys up;
  DirectionKeys down;
};

/// The INIT fields that feed the key schedule and the INIT transcript.
struct InitParams {
  const DevId* dev_id = nullptr;
  std::uint16_t sessctr = 0;
  std::uint32_t t = 0;
  DevNonce dev_nonce;
};

/// IKM -> PRK -> SS -> K_init, K_ack.
Error derive_handshake_keys(CryptoBackend& crypto, const DevSecret& dev_secret,
                            const EdgeSalt& edge_salt, const InitParams& init,
                            HandshakeKeys& out) noexcept;

/// InitProof = HMAC-SHA256(K_init, "DSEKP1 INIT" || u8 len || dev_id || u16 sessctr || u32 t ||
/// dev_nonce)[:16].
Error compute_init_proof(CryptoBackend& crypto, const ProofKey& k_init, const InitParams& init,
                         Proof& out) noexcept;

/// AckProof = HMAC-SHA256(K_ack, "DSEKP1 ACK" || init proof || edge_nonce || u8 status)[:16].
Error compute_ack_proof(CryptoBackend& crypto, const ProofKey& k_ack, const Proof& init_proof,
                        const EdgeNonce& edge_nonce, std::uint8_t status, Proof& out) noexcept;

/// K_rekey = HKDF-Expand(HKDF-Extract(EDGE_SALT, DEV_SECRET), "DSEKP1 rekey" || u8 len || dev_id,
/// 32): the key of REKEY requests. It depends on the device's long-term secret only, so an edge
/// that lost every session of the device can still authenticate a request to it.
Error derive_rekey_key(CryptoBackend& crypto, const DevSecret& dev_secret,
                       const EdgeSalt& edge_salt, const DevId& dev_id, ProofKey& out) noexcept;

/// S_next = HKDF-Expand(HKDF-Extract(EDGE_SALT, S), "DSEKP1 ratchet" || u8 len || dev_id, 32):
/// the ratchet step of a device in ratchet mode (v1.2, PROTOCOL.md 6.6). One-way: S_next does
/// not give S back. `out` is written only on success (it may be `current` itself).
Error derive_next_secret(CryptoBackend& crypto, const DevSecret& current, const EdgeSalt& edge_salt,
                         const DevId& dev_id, DevSecret& out) noexcept;

/// derive_next_secret() and derive_rekey_key() of `current` with the one extraction they share:
/// a device's ratchet step. `next` must not be `current`.
Error derive_ratchet_step(CryptoBackend& crypto, const DevSecret& current,
                          const EdgeSalt& edge_salt, const DevId& dev_id, DevSecret& next,
                          ProofKey& rekey_key) noexcept;

/// RekeyProof = HMAC-SHA256(K_rekey, "DSEKP1 REKEY" || u8 len || dev_id || u16 sessctr ||
/// u32 seq)[:16].
Error compute_rekey_proof(CryptoBackend& crypto, const ProofKey& k_rekey, const DevId& dev_id,
                          std::uint16_t sessctr, std::uint32_t seq, Proof& out) noexcept;

/// The proof of `request` (its dev_id, sessctr and seq) under K_rekey of `dev_secret`: what the
/// edge puts in a REKEY request and the device checks it against. K_rekey is wiped on return.
Error rekey_request_proof(CryptoBackend& crypto, const DevSecret& dev_secret,
                          const EdgeSalt& edge_salt, const RekeyFrame& request,
                          Proof& out) noexcept;

/// TS = HKDF-Extract(EdgeNonce, SS); expands the up and down keys and IV bases.
Error derive_traffic_keys(CryptoBackend& crypto, const SessionSecret& session_secret,
                          const EdgeNonce& edge_nonce, TrafficKeys& out) noexcept;

/// nonce = IV_base XOR (0x00000000 || u64 seq): unique per (session, direction, seq).
[[nodiscard]] AeadNonce make_nonce(const IvBase& iv_base, std::uint32_t seq) noexcept;

/// Size of the AAD of a DATA or downlink frame for this dev_id.
[[nodiscard]] std::size_t data_aad_size(const DevId& dev_id) noexcept;

/// AAD = label || u8 len || dev_id || u16 sessctr || u32 seq || u64 sendts_ms, where label is
/// "DSEKP1 DATA" (uplink) or "DSEKP1 DOWN" (downlink). `out` must hold data_aad_size() bytes;
/// returns the bytes written (0 if `out` is too small).
[[nodiscard]] std::size_t build_data_aad(Direction direction, const DevId& dev_id,
                                         std::uint16_t sessctr, std::uint32_t seq,
                                         std::uint64_t sendts_ms, MutableByteView out) noexcept;

}  // namespace dsekp
