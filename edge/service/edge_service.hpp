// EdgeService: the edge daemon's message handler without MQTT. The MQTT adapter hands it every
// received message (topic, payload, the time of arrival) and publishes what it returns; the
// service does everything in between: decode, look up the device, run the protocol core,
// persist, hand accepted frames to the sink.
//
// Per message, by topic (docs/PROTOCOL.md sections 2 and 6; `{prefix}` from the config):
//   {prefix}dsekp/init  INIT (also on {prefix}dsekp/init/{dev_id}; the same for DATA, and a
//                       frame on a per-device topic must name that device, else
//                       dev_id_mismatch): decode -> registry -> stored state ->
//                       EdgeProtocol::handle_init
//                       -> save the state in one transaction -> commit -> return the ACK for
//                       {prefix}dsekp/init/ack/{dev_id} (QoS 1, in the encoding of the INIT).
//                       A retransmitted INIT gets the stored ACK again and changes nothing.
//   {prefix}dsekp/data  DATA: decode (simdjson) -> registry -> stored state ->
//                       EdgeProtocol::open_data -> save the state AND write the sink row in one
//                       transaction -> commit. Nothing is published, except for a frame under
//                       a session the edge does not hold (unknown_session): a REKEY request for
//                       {prefix}dsekp/rekey/{dev_id}, in the frame's encoding, so that a device
//                       whose session the edge lost starts a new one.
//   {prefix}psk/data    the PSK baseline: decode -> registry -> psk_open with the device's
//                       PSK key -> sink row in a transaction. No state and, by design (the
//                       paper's baseline), NO replay protection: a replayed frame is accepted
//                       and logged again.
//   anything else       unknown_topic.
// send_downlink() seals a downlink frame under the device's newest established session with
// the next seq in this edge's lane that neither the state nor the downlink journal has seen
// used, makes that seq
// durable in the journal (fsync) and in the state (a transaction), and returns the frame for
// {prefix}dsekp/down/{dev_id} (QoS 1, in the encoding of the device's newest accepted INIT).
//
// Persistence: the contract the daemon's exactly-once argument rests on (docs/ARCHITECTURE.md,
// "The edge's durability", tells that argument once). A result's publishes and frame exist only
// after the transaction that produced them has committed. A rejected message changes nothing and
// writes nothing. A transient failure (store_failure, sink_failure, registry_failure,
// internal_error; HandleResult::processed() is false) has rolled everything back: the message
// counts as NOT processed, and a redelivery of the same bytes is handled afresh.
//
// Batches: begin_batch() opens one store transaction; every handle() until commit_batch() then
// works in a savepoint of it (a rejected or failed message undoes only its own writes and rows);
// commit_batch() commits them all at once and only then do the sinks act on the rows (CSV
// append, republish), in message order. A result's `processed()` inside a batch means "its writes
// are in the batch": the caller must not publish (or acknowledge) anything of the batch before
// commit_batch() returned ok; if it fails, nothing of the batch was stored. Without begin_batch()
// every handle() is its own transaction, as before. send_downlink() is refused (internal_error)
// while a batch is open: its frame could otherwise go out before the seq it uses is durable.
//
// Credentials: inside a batch they are answered from memory while the registry is unchanged
// (its change mark is read once per batch, credential_cache.hpp), outside one the registry is
// read on every message, so added, removed and rotated devices take effect without a restart,
// at the latest with the next batch. The registry generation a state was built with is recorded
// next to it (credential_generations.hpp); a state from other credentials is stale: an INIT
// replaces it, and DATA or a downlink deletes it and is refused (unknown_session / no_session). A
// removed device is unknown_device.
//
// Hostile input: handle() never throws and never lets a message allocate without bound: the
// decoders refuse any payload over kMaxFrameSize before looking at it, and every buffer is
// bounded by the frame caps. A stored state (or credential record) that does not decode is never
// trusted and never fatal: the message is refused as corrupt_state, final, so that device is
// quarantined (refused until `dsekp keys reset-state` removes its state) while every other
// device goes on.
//
// Threads: handle(), send_downlink() and decoder_stats() serialise on one mutex, so the service
// (and the registry, store and sink it drives, none of which is thread-safe) may be called from the
// MQTT thread and, e.g., an admin thread. This also makes the service the single writer of each
// device's state within the process (6.5); across processes, the store's generation check turns
// a concurrent save into a store_failure instead of a lost update.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "codec_simdjson/simd_codec.hpp"
#include "credential_cache.hpp"
#include "credential_generations.hpp"
#include "device_interval_limiter.hpp"
#include "downlink_lane.hpp"
#include "dsekp/codec.hpp"
#include "dsekp/crypto.hpp"
#include "dsekp/edge_session.hpp"
#include "edge/registry/device_registry.hpp"
#include "edge/store/downlink_journal.hpp"
#include "edge/store/session_store.hpp"
#include "edge_topics.hpp"
#include "handle_result.hpp"
#include "sink_writer.hpp"

namespace dsekp::edge {

class WriteUnit;

/// Ratcheting devices: a REKEY request goes out under every second secret past the stored one
/// (the device may be ahead of a state restored from an older copy, PROTOCOL.md 6.6 edge rule 4),
/// ratchet_lookahead / 2 + 1 of them but at most this many (9 reach 17 steps ahead: the default
/// look-ahead of 16, and one more), at most once per device per 10 s.
inline constexpr std::uint32_t kMaxRekeyRequests = 9;

struct EdgeServiceConfig {
  std::string topic_prefix;  // e.g. "site1/" (see edge_topics.hpp); default none
  // The protocol core's parameters (EdgeConfig; EDGE_SALT comes from the registry).
  std::uint32_t max_skew_s = 300;     // 0: clockless devices, `t` is a counter
  std::uint32_t max_established = 5;  // 1..kMaxEstablishedSessions
  std::uint32_t replay_window = ReplayWindow::kDefaultSize;
  std::uint32_t ratchet_lookahead = EdgeConfig{}.ratchet_lookahead;  // 1..kMaxRatchetLookahead
  TokenBucketConfig init_rate;
  InitAdmissionHook* admission_hook = nullptr;  // must outlive the service
  // Modes: a message on a disabled mode's topic is mode_disabled (DSEKP covers INIT, DATA and
  // downlink). The PSK baseline is off unless asked for: it has no replay protection.
  bool dsekp_enabled = true;
  bool psk_enabled = false;
  /// The downlink seqs this edge may use (downlink_lane.hpp): distinct lanes for the edges that
  /// share one store, so that a store restored from an older copy cannot make two of them seal
  /// under one seq. One edge: lane 0 of 1.
  DownlinkLane downlink_lane;
};

/// What the service drives. All must outlive it; it uses them only under its lock.
struct EdgeServiceParts {
  DeviceRegistry& registry;
  SessionStore& store;
  /// In the same database as `store`, so records commit with the states (see its header).
  CredentialGenerations& generations;
  SinkWriter& sink;
  CryptoBackend& crypto;
  Rng& rng;  // the edge's CSPRNG (edge nonces)
  /// Where the downlink seqs go before a frame may be published (downlink_journal.hpp). Null:
  /// the state alone decides (tests of other things); the daemon always has one.
  DownlinkJournal* downlink_journal = nullptr;
};

class EdgeService {
 public:
  EdgeService(const EdgeServiceParts& parts, const EdgeServiceConfig& config);
  EdgeService(const EdgeService&) = delete;
  EdgeService& operator=(const EdgeService&) = delete;
  ~EdgeService();

  /// Handles one received MQTT message that arrived at `now_ms` (edge clock, Unix ms).
  [[nodiscard]] HandleResult handle(std::string_view topic, ByteView payload,
                                    std::uint64_t now_ms) noexcept {
    return handle(topic, payload, now_ms, now_ms * 1000);
  }
  /// The same, with the arrival time also in Unix µs for the accepted frame's row
  /// (AcceptedFrame::recvts_us; the daemon's clock reading on delivery). `now_ms` is what the
  /// protocol checks use and is expected to be recvts_us / 1000.
  [[nodiscard]] HandleResult handle(std::string_view topic, ByteView payload, std::uint64_t now_ms,
                                    std::uint64_t recvts_us) noexcept;

  /// Seals `plaintext` (at most kMaxPayloadSize bytes) as the next downlink frame to `dev_id`,
  /// with sendts_ms = `now_ms`. Refusals: bad_dev_id, payload_too_large, unknown_device,
  /// no_session (nothing confirmed yet, or the state was stale), session_exhausted.
  [[nodiscard]] HandleResult send_downlink(std::string_view dev_id, ByteView plaintext,
                                           std::uint64_t now_ms) noexcept;

  /// Opens a batch (see above). Fails if one is open or the store cannot begin.
  [[nodiscard]] StoreResult begin_batch() noexcept;
  /// Commits the open batch; then the sinks act on its rows. A failure has rolled it back.
  [[nodiscard]] StoreResult commit_batch() noexcept;
  /// Rolls the open batch back (nothing of it stays). No-op without one.
  void rollback_batch() noexcept;
  [[nodiscard]] bool batch_open() const noexcept;

  /// Takes the protocol parameters of `config` (max_skew_s, max_established, replay_window,
  /// init_rate, admission_hook) for every message from now on (SIGHUP). The other fields (topic
  /// prefix, modes, downlink encoding) keep the values the service was made with. A new replay
  /// window size applies to sessions established from now on.
  void reconfigure(const EdgeServiceConfig& config);

  /// How the JSON hot frames were decoded so far (fast path, portable fallbacks), under the
  /// service's lock.
  [[nodiscard]] SimdJsonDecoder::Stats decoder_stats() const;

  [[nodiscard]] const EdgeTopics& topics() const noexcept { return topics_; }

 private:
  friend class ReusedContext;
  struct DeviceContext;

  HandleResult internal_error(MessageKind kind, const char* what) noexcept;
  // `topic_dev_id`: the device a per-device topic names (edge_topics.hpp), empty on a shared one.
  void dispatch(MessageKind kind, std::string_view topic_dev_id, ByteView payload,
                std::uint64_t now_ms, std::uint64_t recvts_us, HandleResult& r);
  void on_init(std::string_view topic_dev_id, ByteView payload, std::uint64_t now_ms,
               HandleResult& r);
  void on_data(std::string_view topic_dev_id, ByteView payload, std::uint64_t now_ms,
               std::uint64_t recvts_us, HandleResult& r);
  /// The store's uplink fast path (edge/store/uplink_session_cache.hpp).
  enum class CachedPath : std::uint8_t {
    handled,     // accepted, refused or failed: `r` says which
    miss,        // no cache, or the session's keys are not in it
    not_opened,  // the cached keys do not open the frame: on_data decides the full way
  };
  CachedPath on_cached_data(const DataFrame& frame, ByteView payload, std::uint64_t now_ms,
                            std::uint64_t recvts_us, HandleResult& r);
  void on_psk(ByteView payload, std::uint64_t now_ms, std::uint64_t recvts_us, HandleResult& r);
  void on_downlink(std::string_view dev_id, ByteView plaintext, std::uint64_t now_ms,
                   HandleResult& r);

  /// Registry lookup, stored state and staleness. false: `r` holds the refusal or failure.
  bool load_device(const DevId& dev_id, DeviceContext& ctx, HandleResult& r);
  /// Deletes a stale state (and its record) in its own transaction.
  bool drop_stale(const DevId& dev_id, const DeviceContext& ctx, HandleResult& r);
  /// Saves ctx.state inside the open unit; with `record`, also the credentials' generation.
  bool save_state(const DevId& dev_id, DeviceContext& ctx, bool record, std::uint64_t now_ms,
                  HandleResult& r);
  /// Adds a REKEY request for the session `frame` names (which the device has and the edge does
  /// not) to `r`'s publishes, at most once per device per 10 s, proven under K_rekey of
  /// `dev_secret` (the device's current secret: current_secret()). `ratcheting`: also under
  /// every second secret past it (kMaxRekeyRequests).
  void request_rekey(const DataFrame& frame, ByteView payload, const DevSecret& dev_secret,
                     bool ratcheting, std::uint64_t now_ms, HandleResult& r);
  /// The device's long-term secret now: its state's in ratchet mode (PROTOCOL.md 6.6), else the
  /// registry's; null for a ratcheting device whose provisioned secret is erased and whose state
  /// holds none (nothing can prove anything to it).
  static const DevSecret* current_secret(const DeviceContext& ctx) noexcept;
  /// Commits `unit`; false: `r` holds the store_failure.
  bool commit(WriteUnit& unit, HandleResult& r);

  DeviceRegistry& registry_;
  CredentialCache credentials_{registry_};  // every lookup goes through it
  SessionStore& store_;
  CredentialGenerations& generations_;
  SinkWriter& sink_;
  CryptoBackend& crypto_;
  Rng& rng_;
  DownlinkJournal* downlink_journal_;
  EdgeServiceConfig config_;
  EdgeTopics topics_;
  std::optional<EdgeProtocol> protocol_;  // always set; re-made by reconfigure()
  SimdJsonDecoder decoder_;
  std::array<std::uint8_t, kMaxPayloadSize> plaintext_{};  // wiped after every frame
  std::unique_ptr<DeviceContext> data_context_;  // on_data's, reused; cleared after every frame

  mutable std::mutex mutex_;  // guards everything above and batch_open_
  bool batch_open_ = false;
  DeviceIntervalLimiter ack_resends_{500};
  DeviceIntervalLimiter rekey_requests_{10'000};
};

}  // namespace dsekp::edge
