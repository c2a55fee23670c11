// Internal to edge/service: what the EdgeService handlers (one file per message kind) share —
// the per-message device context and the helpers that set a result's verdict.
#pragma once

#include <string>

#include "edge/store/device_state_copy.hpp"
#include "edge_service.hpp"

namespace dsekp::edge {

/// One device as a message sees it: its current credentials and its stored state.
struct EdgeService::DeviceContext {
  DeviceCredentials credentials;
  EdgeDeviceState state;
  std::uint64_t store_generation = kAbsentGeneration;  // for the conditional save
  bool stale = false;                    // the stored state was built with other credentials
  std::uint32_t loaded_established = 0;  // established sessions in the state as loaded

  /// Back to as constructed, keys wiped: the DATA path reuses one context for every frame,
  /// rewriting only the session slots a device used rather than building a 3.4 KB state anew,
  /// and wipes its keys as soon as each frame is done.
  void clear() noexcept {
    credentials = DeviceCredentials{};
    clear_device_state(state);
    store_generation = kAbsentGeneration;
    stale = false;
    loaded_established = 0;
  }
};

/// Lends the service's reused DATA context for one frame and clears it when the frame is done,
/// whichever way the handler leaves.
class ReusedContext {
 public:
  explicit ReusedContext(EdgeService::DeviceContext& ctx) noexcept : ctx_(ctx) {}
  ReusedContext(const ReusedContext&) = delete;
  ReusedContext& operator=(const ReusedContext&) = delete;
  ~ReusedContext() { ctx_.clear(); }
  [[nodiscard]] EdgeService::DeviceContext& get() noexcept { return ctx_; }

 private:
  EdgeService::DeviceContext& ctx_;
};

namespace service_detail {

inline void reject(HandleResult& r, Error e) {
  r.reason = EdgeReason::protocol_error;
  r.error = e;
}

/// A frame on a per-device topic (`topic_dev_id` not empty) must name that device: otherwise one
/// device account would speak for another (the ACL lets it publish only on its own topics).
inline bool from_another_device(std::string_view topic_dev_id, const DevId& frame_dev_id,
                                HandleResult& r) {
  if (topic_dev_id.empty() || topic_dev_id == frame_dev_id.str()) return false;
  r.reason = EdgeReason::protocol_error;
  r.error = Error::dev_id_mismatch;
  r.detail = "the frame names " + std::string(frame_dev_id.str()) + " on the topic of " +
             std::string(topic_dev_id.substr(0, kDevIdMaxSize));
  return true;
}

inline void fail(HandleResult& r, EdgeReason reason, std::string detail) {
  r.reason = reason;
  r.detail = std::move(detail);
  r.established_delta = 0;
}

/// store_failure with the step that failed and the store's status (and codec reason) in detail.
inline void fail_store(HandleResult& r, const char* step, const StoreResult& s) {
  r.reason = EdgeReason::store_failure;
  r.established_delta = 0;
  r.store_status = s.status;
  r.detail = std::string(step) + ": " + describe(s);
}

/// corrupt_state: the device's stored state (or its credential record) does not decode. Final,
/// not transient: the same bytes will not decode on a retry either, and treating it as a store
/// failure would fail-stop the edge and every other device with it. The device stays refused
/// until an operator resets its state (`dsekp keys reset-state`).
inline void quarantine(HandleResult& r, const DevId& dev_id, const char* what,
                       const StoreResult& s) {
  r.reason = EdgeReason::corrupt_state;
  r.established_delta = 0;
  r.store_status = s.status;
  r.detail = std::string(dev_id.str()) + ": its stored " + what + " does not decode";
  if (s.codec != StateCodecError::ok)
    r.detail += std::string(" (") + state_codec_error_name(s.codec) + ")";
  r.detail += "; refused until `dsekp keys reset-state " + std::string(dev_id.str()) + "`";
}

}  // namespace service_detail
}  // namespace dsekp::edge
