// EdgeService: dispatch by topic, the lock, the counters, and the steps every handler shares
// (device lookup, stale-state handling, saving and committing). The handlers themselves are in
// service_init.cpp, service_uplink.cpp and service_downlink.cpp.
#include "edge_service.hpp"

#include <exception>
#include <optional>

#include "service_internal.hpp"
#include "write_unit.hpp"

namespace dsekp::edge {
namespace {

using service_detail::fail;
using service_detail::fail_store;
using service_detail::quarantine;
using service_detail::reject;

EdgeConfig protocol_config(const DeviceRegistry& registry, const EdgeServiceConfig& config) {
  EdgeConfig out;
  out.edge_salt = registry.edge_salt();
  out.max_skew_s = config.max_skew_s;
  out.max_established = config.max_established;
  out.replay_window = config.replay_window;
  out.ratchet_lookahead = config.ratchet_lookahead;
  out.init_rate = config.init_rate;
  out.admission_hook = config.admission_hook;
  return out;
}

}  // namespace

EdgeService::EdgeService(const EdgeServiceParts& parts, const EdgeServiceConfig& config)
    : registry_(parts.registry),
      store_(parts.store),
      generations_(parts.generations),
      sink_(parts.sink),
      crypto_(parts.crypto),
      rng_(parts.rng),
      downlink_journal_(parts.downlink_journal),
      config_(config),
      topics_(config.topic_prefix),
      protocol_(std::in_place, parts.crypto, protocol_config(parts.registry, config)),
      data_context_(std::make_unique<DeviceContext>()) {}

void EdgeService::reconfigure(const EdgeServiceConfig& config) {
  std::lock_guard lock(mutex_);
  EdgeServiceConfig merged = config_;
  merged.max_skew_s = config.max_skew_s;
  merged.max_established = config.max_established;
  merged.replay_window = config.replay_window;
  merged.ratchet_lookahead = config.ratchet_lookahead;
  merged.init_rate = config.init_rate;
  merged.admission_hook = config.admission_hook;
  config_ = merged;
  protocol_.emplace(crypto_, protocol_config(registry_, config_));
}

EdgeService::~EdgeService() {
  secure_wipe(plaintext_);
}

HandleResult EdgeService::handle(std::string_view topic, ByteView payload, std::uint64_t now_ms,
                                 std::uint64_t recvts_us) noexcept {
  std::string_view topic_dev_id;
  const MessageKind kind = topics_.classify(topic, &topic_dev_id);
  try {
    std::lock_guard lock(mutex_);
    HandleResult r;
    r.kind = kind;
    dispatch(kind, topic_dev_id, payload, now_ms, recvts_us, r);
    return r;
  } catch (const std::exception& e) {
    return internal_error(kind, e.what());
  } catch (...) {
    return internal_error(kind, "unknown exception");
  }
}

HandleResult EdgeService::send_downlink(std::string_view dev_id, ByteView plaintext,
                                        std::uint64_t now_ms) noexcept {
  try {
    std::lock_guard lock(mutex_);
    HandleResult r;
    r.kind = MessageKind::downlink;
    if (batch_open_) {
      r.reason = EdgeReason::internal_error;
      r.detail = "send_downlink inside an open batch";
    } else if (config_.dsekp_enabled) {
      on_downlink(dev_id, plaintext, now_ms, r);
    } else {
      fail(r, EdgeReason::mode_disabled, "DSEKP is disabled");
    }
    return r;
  } catch (const std::exception& e) {
    return internal_error(MessageKind::downlink, e.what());
  } catch (...) {
    return internal_error(MessageKind::downlink, "unknown exception");
  }
}

StoreResult EdgeService::begin_batch() noexcept {
  try {
    std::lock_guard lock(mutex_);
    if (batch_open_) return StoreResult{StoreStatus::transaction_misuse};
    const StoreResult r = store_.begin();
    batch_open_ = r.ok();
    if (batch_open_) credentials_.begin();
    return r;
  } catch (...) {
    return StoreResult{StoreStatus::storage_failure};
  }
}

StoreResult EdgeService::commit_batch() noexcept {
  try {
    std::lock_guard lock(mutex_);
    if (!batch_open_) return StoreResult{StoreStatus::transaction_misuse};
    batch_open_ = false;
    credentials_.end();
    return commit_with_sinks(store_, &sink_);  // a failed commit has rolled back
  } catch (...) {
    return StoreResult{StoreStatus::storage_failure};
  }
}

void EdgeService::rollback_batch() noexcept {
  try {
    std::lock_guard lock(mutex_);
    if (!batch_open_) return;
    batch_open_ = false;
    credentials_.end();
    (void)store_.rollback();
    sink_.rolled_back();
  } catch (...) {
    // A broken mutex: nothing more can be done here.
  }
}

bool EdgeService::batch_open() const noexcept {
  try {
    std::lock_guard lock(mutex_);
    return batch_open_;
  } catch (...) {
    return false;
  }
}

// What handle() and send_downlink() return when a handler threw: nothing it did was committed
// (the WriteUnit rolled back while the exception unwound), so the message was not processed.
HandleResult EdgeService::internal_error(MessageKind kind, const char* what) noexcept {
  HandleResult r;
  r.kind = kind;
  r.reason = EdgeReason::internal_error;
  try {
    r.detail = what;
  } catch (...) {
    // Out of memory: the result without its detail must do.
  }
  return r;
}

SimdJsonDecoder::Stats EdgeService::decoder_stats() const {
  std::lock_guard lock(mutex_);
  return decoder_.stats();
}

void EdgeService::dispatch(MessageKind kind, std::string_view topic_dev_id, ByteView payload,
                           std::uint64_t now_ms, std::uint64_t recvts_us, HandleResult& r) {
  switch (kind) {
    case MessageKind::init:
    case MessageKind::data:
      if (!config_.dsekp_enabled) return fail(r, EdgeReason::mode_disabled, "DSEKP is disabled");
      return kind == MessageKind::init ? on_init(topic_dev_id, payload, now_ms, r)
                                       : on_data(topic_dev_id, payload, now_ms, recvts_us, r);
    case MessageKind::psk:
      if (!config_.psk_enabled) return fail(r, EdgeReason::mode_disabled, "PSK is disabled");
      return on_psk(payload, now_ms, recvts_us, r);
    case MessageKind::unknown:
    case MessageKind::downlink:  // not a topic the edge receives on
      return fail(r, EdgeReason::unknown_topic, {});
  }
}

bool EdgeService::load_device(const DevId& dev_id, DeviceContext& ctx, HandleResult& r) {
  if (const RegistryStatus s = credentials_.find(dev_id.str(), ctx.credentials); !s.ok()) {
    if (s.code() == RegistryErrc::not_found) {
      reject(r, Error::unknown_device);
    } else {
      fail(r, EdgeReason::registry_failure, s.message());
    }
    return false;
  }
  if (const StoreResult s = store_.load(dev_id, ctx.state, ctx.store_generation); !s.ok()) {
    if (s.status == StoreStatus::corrupt_state) {
      quarantine(r, dev_id, "state", s);
    } else {
      fail_store(r, "load", s);
    }
    return false;
  }
  if (ctx.store_generation == kAbsentGeneration) return true;  // nothing stored: nothing stale
  ctx.loaded_established = ctx.state.established_count;
  std::optional<std::uint64_t> recorded;
  if (const StoreResult s = generations_.load(dev_id, recorded); !s.ok()) {
    if (s.status == StoreStatus::corrupt_state) {
      quarantine(r, dev_id, "credential record", s);
    } else {
      fail_store(r, "load credential generation", s);
    }
    return false;
  }
  // No record at all is stale too: the state's origin is unknown, so it is not trusted.
  ctx.stale = !recorded || *recorded != ctx.credentials.generation;
  return true;
}

const DevSecret* EdgeService::current_secret(const DeviceContext& ctx) noexcept {
  if (ctx.state.ratchet.active) return &ctx.state.ratchet.secret;
  if (ctx.credentials.ratchet && ctx.credentials.secret_erased) return nullptr;
  return &ctx.credentials.dev_secret;
}

bool EdgeService::drop_stale(const DevId& dev_id, const DeviceContext& ctx, HandleResult& r) {
  WriteUnit unit(store_, nullptr);
  if (!unit.status().ok()) {
    fail_store(r, "begin", unit.status());
    return false;
  }
  if (const StoreResult s = store_.remove(dev_id); !s.ok()) {
    fail_store(r, "remove stale state", s);
    return false;
  }
  if (const StoreResult s = generations_.remove(dev_id); !s.ok()) {
    fail_store(r, "remove credential generation", s);
    return false;
  }
  if (!commit(unit, r)) return false;
  r.stale_state_dropped = true;
  r.established_delta = -static_cast<std::int64_t>(ctx.loaded_established);
  return true;
}

bool EdgeService::save_state(const DevId& dev_id, DeviceContext& ctx, bool record,
                             std::uint64_t now_ms, HandleResult& r) {
  // The loaded generation makes the save conditional: a state another writer saved since the
  // load (another edge process on the same store) is a generation_conflict, not overwritten.
  if (const StoreResult s = store_.save(dev_id, ctx.state, now_ms, ctx.store_generation); !s.ok()) {
    fail_store(r, "save", s);
    return false;
  }
  // Meaningful only once the unit commits (the daemon reads it only for processed results).
  r.established_delta = static_cast<std::int64_t>(ctx.state.established_count) -
                        static_cast<std::int64_t>(ctx.loaded_established);
  if (ctx.credentials.ratchet && !ctx.credentials.secret_erased && ctx.state.ratchet.active &&
      ctx.state.ratchet.epoch > 0)
    r.provisioned_secret_superseded = ctx.credentials.generation;
  if (!record) return true;
  if (const StoreResult s = generations_.record(dev_id, ctx.credentials.generation); !s.ok()) {
    fail_store(r, "record credential generation", s);
    return false;
  }
  return true;
}

bool EdgeService::commit(WriteUnit& unit, HandleResult& r) {
  if (const StoreResult s = unit.commit(); !s.ok()) {
    fail_store(r, "commit", s);
    return false;
  }
  return true;
}

}  // namespace dsekp::edge
