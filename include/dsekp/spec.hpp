// Protocol constants of DSEKP v1 and the strong types of its values, in one place.
// docs/PROTOCOL.md is the normative text; every constant here is named there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "dsekp/bytes.hpp"
#include "dsekp/error.hpp"

namespace dsekp {

inline constexpr std::uint8_t kProtocolVersion = 1;

// Sizes (bytes).
inline constexpr std::size_t kDevSecretSize = 32;
inline constexpr std::size_t kEdgeSaltMinSize = 16;
inline constexpr std::size_t kEdgeSaltMaxSize = 32;
inline constexpr std::size_t kDevIdMaxSize = 64;
inline constexpr std::size_t kNonceSize = 12;  // DevNonce, EdgeNonce, AES-GCM nonce, IV base
inline constexpr std::size_t kProofSize = 16;  // truncated HMAC-SHA256
inline constexpr std::size_t kTagSize = 16;    // AES-GCM tag
inline constexpr std::size_t kAeadKeySize = 16;
inline constexpr std::size_t kHashSize = 32;
/// Largest plaintext a DATA, downlink or PSK frame may carry.
inline constexpr std::size_t kMaxPayloadSize = 1024;
/// Largest frame any decoder accepts (a JSON DATA frame with a full payload fits).
inline constexpr std::size_t kMaxFrameSize = 2048;

// Key-schedule and transcript labels (ASCII, no terminator).
inline constexpr std::string_view kLabelSession = "DSEKP1 session";
inline constexpr std::string_view kLabelInitKey = "DSEKP1 init";
inline constexpr std::string_view kLabelAckKey = "DSEKP1 ack";
inline constexpr std::string_view kLabelUp = "DSEKP1 up";
inline constexpr std::string_view kLabelDown = "DSEKP1 down";
inline constexpr std::string_view kLabelInitProof = "DSEKP1 INIT";
inline constexpr std::string_view kLabelAckProof = "DSEKP1 ACK";
inline constexpr std::string_view kLabelDataAad = "DSEKP1 DATA";
inline constexpr std::string_view kLabelDownAad = "DSEKP1 DOWN";
inline constexpr std::string_view kLabelRekeyKey = "DSEKP1 rekey";
inline constexpr std::string_view kLabelRekeyProof = "DSEKP1 REKEY";
// The ratchet (v1.2, PROTOCOL.md 6.6): a device's next long-term secret.
inline constexpr std::string_view kLabelRatchet = "DSEKP1 ratchet";

// Compact encoding: first byte of each frame. JSON frames start with '{' (0x7B).
enum class FrameType : std::uint8_t {
  init = 0x01,
  ack = 0x02,
  data = 0x03,
  down = 0x04,
  psk = 0x05,
  rekey = 0x06,
};

inline constexpr std::uint8_t kAckStatusOk = 0;

/// A REKEY request names one of the device's last kRekeyRecentFrames uplink seqs (6.1 step 7):
/// enough for the backlog a broker queues while the edge is down (22 minutes of a device
/// sending every 20 ms), whose oldest frame is the one the first request answers.
inline constexpr std::uint32_t kRekeyRecentFrames = 65536;

// Strong types.
using DevSecret = SecretBytes<kDevSecretSize, struct DevSecretTag>;
using PskKey = SecretBytes<kAeadKeySize, struct PskKeyTag>;
using AeadKey = SecretBytes<kAeadKeySize, struct AeadKeyTag>;
using IvBase = SecretBytes<kNonceSize, struct IvBaseTag>;
using Prk = SecretBytes<kHashSize, struct PrkTag>;
using SessionSecret = SecretBytes<kHashSize, struct SessionSecretTag>;
using ProofKey = SecretBytes<kHashSize, struct ProofKeyTag>;
using DevNonce = FixedBytes<kNonceSize, struct DevNonceTag>;
using EdgeNonce = FixedBytes<kNonceSize, struct EdgeNonceTag>;
using AeadNonce = FixedBytes<kNonceSize, struct AeadNonceTag>;
using Proof = FixedBytes<kProofSize, struct ProofTag>;
using AeadTag = FixedBytes<kTagSize, struct AeadTagTag>;
using Sha256Digest = FixedBytes<kHashSize, struct Sha256DigestTag>;

/// EDGE_SALT: 16-32 bytes, one per deployment, not secret.
class EdgeSalt {
 public:
  /// Fails with invalid_argument unless 16 <= size <= 32.
  [[nodiscard]] Error assign(ByteView bytes) noexcept;
  [[nodiscard]] ByteView view() const noexcept { return ByteView(bytes_.data(), size_); }

 private:
  std::array<std::uint8_t, kEdgeSaltMaxSize> bytes_{};
  std::size_t size_ = 0;
};

/// A device identifier: 1-64 bytes of [A-Za-z0-9._-]. Always valid once constructed via assign().
class DevId {
 public:
  /// Fails with bad_dev_id if `text` is empty, too long or has a byte outside the alphabet.
  [[nodiscard]] Error assign(std::string_view text) noexcept;
  [[nodiscard]] std::string_view str() const noexcept { return {chars_.data(), size_}; }
  [[nodiscard]] ByteView view() const noexcept {
    return ByteView(reinterpret_cast<const std::uint8_t*>(chars_.data()), size_);
  }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool operator==(const DevId& other) const noexcept { return str() == other.str(); }

 private:
  std::array<char, kDevIdMaxSize> chars_{};
  std::size_t size_ = 0;
};

/// True if `text` is a valid dev_id (see DevId).
[[nodiscard]] bool is_valid_dev_id(std::string_view text) noexcept;

}  // namespace dsekp
