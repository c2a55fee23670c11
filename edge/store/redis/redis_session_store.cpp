// SessionStore on Redis (see redis_session_store.hpp).
#include "redis_session_store.hpp"

#include <array>
#include <charconv>
#include <chrono>
#include <map>
#include <utility>

#include "edge/store/device_state_copy.hpp"
#include "edge/store/redis/redis_durability.hpp"
#include "edge/store/redis/redis_key_slot.hpp"
#include "redis_window_field.hpp"

namespace dsekp::edge {
namespace {

using redis::Reply;

std::string_view as_chars(const std::vector<std::uint8_t>& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

bool parse_u64(std::string_view text, std::uint64_t& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size() && !text.empty();
}

bool is_error(const Reply& r) {
  return r->type == REDIS_REPLY_ERROR;
}

std::string reply_text(const redisReply& r) {
  return std::string(r.str, r.len);
}

std::string_view text_of(const redisReply& r) {
  return {r.str, r.len};
}

// The tags of `state`'s established sessions, in order (redis_window_field.hpp): computed once
// per load or save and used for the window fields, the snapshots and the cache.
std::vector<std::string> tags_of(const EdgeDeviceState& state) {
  std::vector<std::string> tags;
  tags.reserve(state.established_count);
  for (std::uint32_t i = 0; i < state.established_count; ++i)
    tags.push_back(redis::session_tag(state.established[i]));
  return tags;
}

}  // namespace

std::string check_redis_prefix(std::string_view prefix) {
  if (prefix.size() > 128) return "key prefix longer than 128 bytes";
  for (const char c : prefix) {
    if (c <= ' ' || c > '~') return "key prefix holds a space or a non-printable byte";
    // A brace would make part of the prefix the Redis Cluster hash tag instead of the dev_id.
    if (c == '{' || c == '}') return "key prefix holds '{' or '}'";
  }
  return {};
}

std::string check_redis_edge_id(std::string_view edge_id) {
  if (edge_id.empty()) return "empty edge id";
  if (std::string why = check_redis_prefix(edge_id); !why.empty())
    return "edge id (MQTT client id) unusable in a Redis key: " +
           why.substr(std::string_view("key prefix ").size());
  return {};
}

namespace {

redis::RedisClient client_for(const RedisStoreOptions& options) {
  if (options.cluster_seeds.empty()) return redis::RedisClient(options.endpoint);
  return redis::RedisClient(options.nodes());
}

}  // namespace

std::vector<redis::RedisEndpoint> RedisStoreOptions::nodes() const {
  if (cluster_seeds.empty()) return {endpoint};
  std::vector<redis::RedisEndpoint> out;
  for (const auto& [host, port] : cluster_seeds) {
    redis::RedisEndpoint e = endpoint;
    e.host = host;
    e.port = port;
    out.push_back(std::move(e));
  }
  return out;
}

RedisSessionStore::RedisSessionStore(const RedisStoreOptions& options)
    : client_(client_for(options)),
      cluster_wait_(options.cluster_wait),
      prefix_(options.prefix),
      uplink_(options.cache_devices) {
  if (client_.clustered()) pending_slots_noted_.assign(redis::kClusterSlots, false);
  // Unit marks grow across restarts too (a restarted edge's marks exceed its predecessor's,
  // whose lists its start-up recovery reads first and then deletes).
  unit_ = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::system_clock::now().time_since_epoch())
                                         .count()) *
          1000;
}

RedisSessionStore::~RedisSessionStore() {
  discard_staged();
}

std::unique_ptr<RedisSessionStore> RedisSessionStore::open(const RedisStoreOptions& options,
                                                           std::string& error) {
  if (std::string why = check_redis_prefix(options.prefix); !why.empty()) {
    error = std::move(why);
    return nullptr;
  }
  const auto& e = options.endpoint;
  if (e.port <= 0 || e.port > 65535 || e.host.empty() || e.connect_timeout_ms <= 0 ||
      e.command_timeout_ms <= 0 || e.reconnect_min_ms <= 0 ||
      e.reconnect_max_ms < e.reconnect_min_ms) {
    error = "invalid Redis endpoint (host, port 1..65535, positive timeouts, min <= max backoff)";
    return nullptr;
  }
  for (const auto& [host, port] : options.cluster_seeds)
    if (host.empty() || port <= 0 || port > 65535) {
      error = "invalid Redis Cluster node (host, port 1..65535)";
      return nullptr;
    }
  if (!options.cluster_seeds.empty() && options.cluster_wait.replicas > 0 &&
      (options.cluster_wait.timeout_ms <= 0 ||
       options.cluster_wait.timeout_ms >= options.endpoint.command_timeout_ms)) {
    error = "the Redis Cluster replica wait needs a positive timeout below the command timeout";
    return nullptr;
  }
  std::unique_ptr<RedisSessionStore> store(new RedisSessionStore(options));
  if (!store->client_.connect()) {
    error = store->client_.last_error();
    return nullptr;
  }
  if (!store->client_.clustered()) {
    // A cluster node reached as one server would answer MOVED for most keys, for ever.
    const std::array<std::string_view, 2> info{"INFO", "cluster"};
    const Reply r = store->client_.command(store->prefix_, info);
    if (r != nullptr && r->type == REDIS_REPLY_STRING &&
        text_of(*r).find("cluster_enabled:1") != std::string_view::npos) {
      error = "the server at " + e.host + ":" + std::to_string(e.port) +
              " is a Redis Cluster node: use redis+cluster://";
      return nullptr;
    }
  }
  // On a cluster this loads the script on one primary; the others load it at their first
  // NOSCRIPT (redis_commit_call.hpp).
  if (const StoreResult loaded = store->script_.load(store->prefix_); !loaded.ok()) {
    error = loaded.message;
    return nullptr;
  }
  return store;
}

std::string RedisSessionStore::key_of(const DevId& dev_id) const {
  return device_key(dev_id.str());
}

std::string RedisSessionStore::device_key(std::string_view dev_id) const {
  std::string key;
  key.reserve(prefix_.size() + dev_id.size() + 6);
  key.append(prefix_).append("dev2:{").append(dev_id).append("}");
  return key;
}

std::string RedisSessionStore::pending_key_of(std::string_view edge_id) const {
  std::string key;
  key.reserve(prefix_.size() + edge_id.size() + 10);
  key.append(prefix_).append("pending:{").append(edge_id).append("}");
  return key;
}

StoreResult RedisSessionStore::stage_pending_row(std::string_view dev_id, std::string row) {
  if (!in_transaction_) return StoreResult{StoreStatus::transaction_misuse};
  pending_rows_.push_back(std::move(row));
  pending_row_slots_.push_back(client_.clustered() ? redis::key_slot(device_key(dev_id)) : 0);
  return StoreResult{};
}

std::string RedisSessionStore::pending_key_in_slot(const std::string& key, std::uint16_t slot) {
  // <prefix>pending:{<edge id>} -> <prefix>pending:{<slot tag>}:<edge id>
  const std::size_t open = key.rfind('{');
  if (open == std::string::npos || key.size() < open + 2) return key;
  return key.substr(0, open + 1) + std::string(redis::slot_tag(slot)) +
         "}:" + key.substr(open + 1, key.size() - open - 2);
}

std::string RedisSessionStore::pending_slots_key(const std::string& key) {
  return key + ":slots";
}

StoreResult RedisSessionStore::note_pending_slots(const std::vector<std::uint16_t>& slots) {
  std::vector<std::string> members;
  for (std::uint16_t slot : slots)
    if (!pending_slots_noted_.at(slot)) members.push_back(std::to_string(slot));
  if (members.empty()) return StoreResult{};
  const std::string set_key = pending_slots_key(pending_key_);
  std::vector<std::string_view> add{"SADD", set_key};
  add.insert(add.end(), members.begin(), members.end());
  // Confirmed by the replicas like a commit: a set that lost a slot in a failover would hide
  // its list from the recovery.
  const std::vector<Reply> replies = client_.pipeline(set_key, {add}, cluster_wait_);
  if (replies.empty()) return failure(client_.last_error());
  if (is_error(replies.front()))
    return failure("SADD " + set_key + ": " + reply_text(*replies.front()));
  for (std::uint16_t slot : slots) pending_slots_noted_[slot] = true;
  return StoreResult{};
}

StoreResult RedisSessionStore::pending_lists(const std::string& key,
                                             std::vector<std::string>& lists) {
  lists.assign(1, key);
  if (!client_.clustered()) return StoreResult{};
  // Every slot the edge has written a list in (the set is written before any such list).
  lists.clear();
  const std::string set_key = pending_slots_key(key);
  const std::array<std::string_view, 2> members{"SMEMBERS", set_key};
  const Reply m = client_.command(set_key, members);
  if (m == nullptr) return failure(client_.last_error());
  if (is_error(m) || m->type != REDIS_REPLY_ARRAY)
    return failure("SMEMBERS " + set_key + ": unexpected reply");
  for (std::size_t i = 0; i < m->elements; ++i) {
    std::uint64_t slot = 0;
    if (m->element[i]->type != REDIS_REPLY_STRING || !parse_u64(text_of(*m->element[i]), slot) ||
        slot >= redis::kClusterSlots)
      return failure("SMEMBERS " + set_key + ": not a slot");
    lists.push_back(pending_key_in_slot(key, static_cast<std::uint16_t>(slot)));
  }
  return StoreResult{};
}

StoreResult RedisSessionStore::read_pending(const std::string& key,
                                            std::vector<std::string>& rows) {
  rows.clear();
  std::vector<std::string> lists;
  if (StoreResult listed = pending_lists(key, lists); !listed.ok()) return listed;
  std::vector<redis::SlotBatch> batches;
  for (const std::string& list : lists)
    batches.push_back({redis::key_slot(list), {{"LRANGE", list, "0", "-1"}}});
  std::vector<std::vector<Reply>> replies = client_.pipeline_slots(batches);
  std::uint64_t newest = 0;  // on a cluster: the newest unit mark seen, whose rows are kept
  for (std::size_t l = 0; l < lists.size(); ++l) {
    const std::string& list = lists[l];
    if (replies[l].empty()) return failure(client_.last_error());
    const Reply& r = replies[l].front();
    if (is_error(r)) return failure("LRANGE " + list + ": " + reply_text(*r));
    if (r->type != REDIS_REPLY_ARRAY) return failure("LRANGE: unexpected reply");
    std::size_t first = 0;
    if (client_.clustered() && r->elements > 0) {
      const std::string_view head =
          r->element[0]->type == REDIS_REPLY_STRING ? text_of(*r->element[0]) : std::string_view();
      std::uint64_t unit = 0;
      if (!head.starts_with(kUnitMark) || !parse_u64(head.substr(kUnitMark.size()), unit))
        return failure("LRANGE " + list + ": no unit mark first");
      if (unit < newest) continue;  // an older commit's rows: stored locally since
      if (unit > newest) rows.clear();
      newest = unit;
      first = 1;
    }
    for (std::size_t i = first; i < r->elements; ++i) {
      const redisReply& e = *r->element[i];
      if (e.type != REDIS_REPLY_STRING) return failure("LRANGE: unexpected element");
      rows.emplace_back(e.str, e.len);
    }
  }
  return StoreResult{};
}

StoreResult RedisSessionStore::clear_pending(const std::string& key) {
  // On a cluster the set of slots stays: it only has to be a superset of the lists.
  std::vector<std::string> lists;
  if (StoreResult listed = pending_lists(key, lists); !listed.ok()) return listed;
  std::vector<redis::SlotBatch> batches;
  for (const std::string& list : lists) batches.push_back({redis::key_slot(list), {{"DEL", list}}});
  const std::vector<std::vector<Reply>> replies = client_.pipeline_slots(batches);
  for (std::size_t l = 0; l < lists.size(); ++l) {
    if (replies[l].empty()) return failure(client_.last_error());
    if (is_error(replies[l].front()))
      return failure("DEL " + lists[l] + ": " + reply_text(*replies[l].front()));
  }
  return StoreResult{};
}

StoreResult RedisSessionStore::make_durable() {
  if (in_transaction_) return StoreResult{StoreStatus::transaction_misuse};
  StoreResult result;
  (void)client_.for_each_primary([&](redis::RedisConnection& node) {
    result = redis::check_writes_durable(node);
    if (!result.ok() && client_.clustered())
      result.message =
          node.endpoint().host + ":" + std::to_string(node.endpoint().port) + ": " + result.message;
    return result.ok();
  });
  return recorded(result);
}

StoreResult RedisSessionStore::recorded(StoreResult r) {
  if (r.status == StoreStatus::storage_failure) last_error_ = r.message;
  return r;
}

StoreResult RedisSessionStore::failure(std::string why) {
  last_error_ = std::move(why);
  return storage_failure(last_error_);
}

// The newest staged operation on `key` of the kind asked for: cred records for
// load_credential(), saves and removes (which decide the state) for load(). A remove also ends
// any cred record staged before it (it deletes the whole hash).
const RedisSessionStore::Staged* RedisSessionStore::find_staged(const std::string& key,
                                                                Kind wanted) const noexcept {
  for (auto it = staged_.rbegin(); it != staged_.rend(); ++it) {
    if (it->key != key) continue;
    if (it->kind == Kind::remove || it->kind == wanted) return &*it;
  }
  return nullptr;
}

StoreResult RedisSessionStore::load(const DevId& dev_id, EdgeDeviceState& out,
                                    std::uint64_t& generation) {
  clear_device_state(out);
  generation = kAbsentGeneration;
  const std::string key = key_of(dev_id);
  // A staged state was derived from an earlier load in this transaction: the cred field cached
  // then (if it is still this device's) belongs to the same snapshot, so it is kept.
  if (const Staged* s = find_staged(key, Kind::save)) {  // this transaction's own write
    if (s->kind == Kind::remove) return StoreResult{};
    generation = s->new_generation;
    const StateCodecError e = decode_device_state(s->blob, &dev_id, out);
    if (e == StateCodecError::ok) {
      const std::vector<std::string> tags = tags_of(out);
      apply_staged_accepts(key, out, tags, s);
      remember(key, out, tags);
    }
    return StoreResult{e == StateCodecError::ok ? StoreStatus::ok : StoreStatus::corrupt_state, e};
  }
  loaded_key_.clear();
  loaded_cred_.reset();
  snapshots_.erase(key);
  // One round trip for everything of the device: state, generation, cred record and the
  // sessions' window fields (redis_window_field.hpp).
  const std::array<std::string_view, 2> args{"HGETALL", key};
  const Reply r = client_.command(key, args);
  if (r == nullptr) return failure(client_.last_error());
  if (is_error(r)) return failure("HGETALL " + key + ": " + reply_text(*r));
  if (r->type != REDIS_REPLY_ARRAY || r->elements % 2 != 0)
    return failure("HGETALL: unexpected reply");
  const redisReply* state = nullptr;
  const redisReply* gen = nullptr;
  const redisReply* cred = nullptr;
  std::vector<std::pair<std::string_view, std::string_view>> windows;
  for (std::size_t i = 0; i < r->elements; i += 2) {
    const redisReply& name = *r->element[i];
    const redisReply& value = *r->element[i + 1];
    if (name.type != REDIS_REPLY_STRING || value.type != REDIS_REPLY_STRING)
      return failure("HGETALL: unexpected element");
    const std::string_view field = text_of(name);
    if (field == "state")
      state = &value;
    else if (field == "gen")
      gen = &value;
    else if (field == "cred")
      cred = &value;
    else if (field.starts_with("w:"))
      windows.emplace_back(field, text_of(value));
  }
  loaded_key_ = key;
  if (std::uint64_t c = 0; cred != nullptr && parse_u64(text_of(*cred), c)) loaded_cred_ = c;
  if (state == nullptr && gen == nullptr) {
    uplink_.erase(key);
    return StoreResult{};
  }
  // A hash with a state but no (numeric) generation, or the reverse, was not written by the
  // commit script: report it as corrupt rather than guess a generation.
  if (state == nullptr || gen == nullptr || !parse_u64(text_of(*gen), generation) ||
      generation == kAbsentGeneration || generation == kAnyGeneration) {
    generation = kAbsentGeneration;
    uplink_.erase(key);
    return StoreResult{StoreStatus::corrupt_state, StateCodecError::inconsistent_state};
  }
  // Decoded straight from hiredis's reply buffer, which the Reply frees (not wiped: hiredis
  // owns it; the bytes are the same the server holds in memory anyway).
  const StateCodecError e = decode_device_state(
      ByteView(reinterpret_cast<const std::uint8_t*>(state->str), state->len), &dev_id, out);
  if (e != StateCodecError::ok) {
    uplink_.erase(key);
    return StoreResult{StoreStatus::corrupt_state, e};
  }
  // The window fields, not the blob, hold the established sessions' windows: the blob's are as
  // of the last save, the fields move with every accepted frame. Every committed established
  // session has its field (the save that established it wrote it, in the same script run); a
  // missing field, or one of another session, means the hash was not written by this store:
  // refused like any other inconsistent state, not judged on the blob's stale window (fail
  // closed).
  const std::vector<std::string> tags = tags_of(out);
  for (std::uint32_t i = 0; i < out.established_count; ++i) {
    EdgeSession& session = out.established[i];
    const std::string name = redis::window_field_name(session.sessctr);
    bool stored = false;
    for (const auto& [field, value] : windows) {
      if (field != name) continue;
      stored = redis::decode_window_field(value, tags[i], session.uplink_window) ==
               redis::WindowFieldMatch::same_session;
    }
    if (!stored) {
      clear_device_state(out);
      generation = kAbsentGeneration;
      uplink_.erase(key);
      return StoreResult{StoreStatus::corrupt_state, StateCodecError::inconsistent_state};
    }
  }
  apply_staged_accepts(key, out, tags);
  remember(key, out, tags);
  if (loaded_cred_) {
    uplink_.put(key, out, tags, *loaded_cred_);
  } else {
    uplink_.erase(key);
  }
  return StoreResult{};
}

// The windows a load returns include what this transaction's accepts staged for the device (after
// `after`, when the state itself comes from a staged save): the core then refuses a duplicate in
// the same batch as a replay instead of the commit failing on it.
void RedisSessionStore::apply_staged_accepts(const std::string& key, EdgeDeviceState& state,
                                             const std::vector<std::string>& tags,
                                             const Staged* after) const {
  auto it = staged_.begin();
  if (after != nullptr) it += (after - staged_.data()) + 1;
  for (; it != staged_.end(); ++it) {
    if (it->kind != Kind::wacc || it->key != key) continue;
    for (std::uint32_t i = 0; i < state.established_count; ++i) {
      EdgeSession& session = state.established[i];
      if (redis::window_field_name(session.sessctr) != it->expected || tags[i] != it->updated_ms)
        continue;
      // "W seq1 seq2 ...": the first number is the window size.
      std::string_view list = as_chars(it->blob);
      bool first = true;
      while (!list.empty()) {
        const std::size_t space = list.find(' ');
        const std::string_view word = list.substr(0, space);
        list = space == std::string_view::npos ? std::string_view{} : list.substr(space + 1);
        std::uint64_t seq = 0;
        if (first || !parse_u64(word, seq) || seq > UINT32_MAX) {
          first = false;
          continue;
        }
        (void)session.uplink_window.accept(static_cast<std::uint32_t>(seq));
      }
    }
  }
}

void RedisSessionStore::remember(const std::string& key, const EdgeDeviceState& state,
                                 const std::vector<std::string>& tags) {
  // Outside a transaction only the last device is kept (a save follows its load); inside one,
  // the transaction's devices (cleared when it ends).
  if (!in_transaction_) snapshots_.clear();
  std::vector<WindowSnapshot>& list = snapshots_[key];
  list.clear();
  for (std::uint32_t i = 0; i < state.established_count; ++i) {
    const EdgeSession& session = state.established[i];
    list.push_back(WindowSnapshot{session.sessctr, tags[i], session.uplink_window});
  }
}

void RedisSessionStore::forget(const DevId& dev_id) noexcept {
  try {
    uplink_.erase(key_of(dev_id));
  } catch (...) {
    uplink_.clear();  // cannot build the key (out of memory): forget every device rather than one
  }
}

EdgeSession* RedisSessionStore::find_session(const DevId& dev_id, std::uint16_t sessctr,
                                             std::uint64_t credential_generation) noexcept {
  try {
    std::string key = key_of(dev_id);
    redis::UplinkKeys::Entry* e = uplink_.find(key, sessctr, credential_generation);
    if (e == nullptr) return nullptr;
    if (in_transaction_) {
      bool seen = false;
      for (const WindowBefore& w : windows_before_)
        seen = seen || (w.sessctr == sessctr && w.key == key && w.tag == e->tag);
      if (!seen)
        windows_before_.push_back(
            WindowBefore{std::move(key), sessctr, e->tag, e->session.uplink_window});
    }
    return &e->session;
  } catch (...) {
    // Out of memory building the key: a miss (the slow path decides).
  }
  return nullptr;
}

StoreResult RedisSessionStore::stage_accept(const DevId& dev_id, const EdgeSession& session,
                                            std::uint32_t seq) {
  const std::string key = key_of(dev_id);
  const redis::UplinkKeys::Entry* cached = uplink_.entry_of(key, session);
  if (!in_transaction_ || cached == nullptr) {
    uplink_.erase(key);
    return StoreResult{StoreStatus::transaction_misuse};
  }
  Staged op;
  op.key = key;
  op.dev_id = std::string(dev_id.str());
  op.kind = Kind::wacc;
  op.expected = redis::window_field_name(session.sessctr);
  op.updated_ms = cached->tag;
  const std::string list = std::to_string(session.uplink_window.size()) + " " + std::to_string(seq);
  op.blob.assign(list.begin(), list.end());
  try {
    touched_.push_back(key);
    staged_.push_back(std::move(op));
  } catch (...) {
    uplink_.erase(key);
    throw;
  }
  return StoreResult{};
}

void RedisSessionStore::stage_windows(const std::string& key, const EdgeDeviceState& state,
                                      const std::vector<std::string>& tags,
                                      std::uint64_t generation, std::vector<Staged>& ops) const {
  const auto snapshot = snapshots_.find(key);
  std::string keep;
  for (std::uint32_t i = 0; i < state.established_count; ++i) {
    const EdgeSession& session = state.established[i];
    Staged op;
    op.key = key;
    op.expected = redis::window_field_name(session.sessctr);
    op.updated_ms = tags[i];
    keep.append(keep.empty() ? "" : " ").append(op.expected);
    const WindowSnapshot* before = nullptr;
    if (generation != kAnyGeneration && snapshot != snapshots_.end())
      for (const WindowSnapshot& w : snapshot->second)
        if (w.sessctr == session.sessctr && w.tag == op.updated_ms) before = &w;
    if (before != nullptr) {
      // Only what this writer added: the stored window may hold more by now (other edges).
      const std::vector<std::uint32_t> added =
          redis::newly_accepted(before->window, session.uplink_window);
      if (added.empty()) continue;
      std::string list = std::to_string(session.uplink_window.size());
      for (const std::uint32_t seq : added) list.append(" ").append(std::to_string(seq));
      op.kind = Kind::wacc;
      op.blob.assign(list.begin(), list.end());
    } else {
      // A session new to the hash (or a save that did not load it: kAnyGeneration writers hold
      // the only copy, as with SQLite): its window as given.
      const std::string value = redis::encode_window_field(op.updated_ms, session.uplink_window);
      op.kind = Kind::wput;
      op.blob.assign(value.begin(), value.end());
    }
    ops.push_back(std::move(op));
  }
  Staged prune;
  prune.key = key;
  prune.kind = Kind::wkeep;
  prune.blob.assign(keep.begin(), keep.end());
  ops.push_back(std::move(prune));
}

StoreResult RedisSessionStore::save(const DevId& dev_id, const EdgeDeviceState& state,
                                    std::uint64_t now_ms, std::uint64_t& generation) {
  if (state.dev_id.size() != 0 && !(state.dev_id == dev_id))
    return StoreResult{StoreStatus::dev_id_mismatch};
  Staged op;
  if (const StateCodecError e = encode_device_state(state, op.blob); e != StateCodecError::ok)
    return StoreResult{StoreStatus::invalid_state, e};
  op.key = key_of(dev_id);
  op.dev_id = std::string(dev_id.str());
  op.expected = generation == kAnyGeneration ? "any" : std::to_string(generation);
  op.updated_ms = std::to_string(now_ms);
  const std::string key = op.key;
  std::vector<Staged> ops;
  ops.push_back(std::move(op));
  const std::vector<std::string> tags = tags_of(state);
  stage_windows(key, state, tags, generation, ops);
  if (in_transaction_) {
    ops.front().new_generation = generation == kAnyGeneration ? kAnyGeneration : generation + 1;
    generation = ops.front().new_generation;
    for (Staged& staged : ops) staged_.push_back(std::move(staged));
    remember(key, state, tags);
    // The cache follows the saved sessions at once (a failed commit or an undone savepoint
    // forgets the device again, as for any staged operation), under the cred record loaded
    // with the state; a save without one leaves the device uncached.
    std::optional<std::uint64_t> cred;
    if (const Staged* c = find_staged(key, Kind::cred); c != nullptr) {
      if (std::uint64_t g = 0; c->kind == Kind::cred && parse_u64(as_chars(c->blob), g)) cred = g;
    } else if (key == loaded_key_) {
      cred = loaded_cred_;
    }
    if (cred) {
      uplink_.put(key, state, tags, *cred);
    } else {
      uplink_.erase(key);
    }
    return StoreResult{};
  }
  uplink_.erase(key);  // outside a transaction: the next frame reloads
  std::vector<std::uint64_t> generations;
  const StoreResult r = run_script(ops, generations);
  secure_wipe(ops.front().blob);
  if (r.ok()) {
    generation = generations.front();
    remember(key, state, tags);
  }
  return r;
}

StoreResult RedisSessionStore::remove(const DevId& dev_id) {
  Staged op;
  op.key = key_of(dev_id);
  op.dev_id = std::string(dev_id.str());
  op.kind = Kind::remove;
  op.expected = "any";
  uplink_.erase(op.key);
  snapshots_.erase(op.key);
  if (in_transaction_) {
    staged_.push_back(std::move(op));
    return StoreResult{};
  }
  std::vector<Staged> ops;
  ops.push_back(std::move(op));
  std::vector<std::uint64_t> generations;
  return run_script(ops, generations);
}

StoreResult RedisSessionStore::load_credential(const DevId& dev_id,
                                               std::optional<std::uint64_t>& generation) {
  generation.reset();
  const std::string key = key_of(dev_id);
  if (const Staged* s = find_staged(key, Kind::cred)) {
    if (s->kind == Kind::remove || s->blob.empty()) return StoreResult{};
    std::uint64_t g = 0;
    if (!parse_u64(as_chars(s->blob), g)) return failure("staged credential record unreadable");
    generation = g;
    return StoreResult{};
  }
  if (key == loaded_key_) {  // fetched with the state a moment ago
    generation = loaded_cred_;
    return StoreResult{};
  }
  const std::array<std::string_view, 3> args{"HGET", key, "cred"};
  const Reply r = client_.command(key, args);
  if (r == nullptr) return failure(client_.last_error());
  if (is_error(r)) return failure("HGET " + key + ": " + reply_text(*r));
  if (r->type == REDIS_REPLY_NIL) return StoreResult{};
  std::uint64_t g = 0;
  if (r->type != REDIS_REPLY_STRING || !parse_u64(std::string_view(r->str, r->len), g))
    return StoreResult{StoreStatus::corrupt_state, StateCodecError::inconsistent_state};
  generation = g;
  return StoreResult{};
}

StoreResult RedisSessionStore::stage_credential(const DevId& dev_id,
                                                std::optional<std::uint64_t> generation) {
  if (!in_transaction_) return StoreResult{StoreStatus::transaction_misuse};
  Staged op;
  op.key = key_of(dev_id);
  op.dev_id = std::string(dev_id.str());
  op.kind = Kind::cred;
  uplink_.erase(op.key);  // cached under the record this replaces
  op.expected = "any";
  if (generation) {
    const std::string text = std::to_string(*generation);
    op.blob.assign(text.begin(), text.end());
  }
  staged_.push_back(std::move(op));
  return StoreResult{};
}

StoreResult RedisSessionStore::begin() {
  if (in_transaction_) return StoreResult{StoreStatus::transaction_misuse};
  in_transaction_ = true;
  return StoreResult{};
}

StoreResult RedisSessionStore::commit() {
  if (!in_transaction_) return StoreResult{StoreStatus::transaction_misuse};
  in_transaction_ = false;
  in_savepoint_ = false;  // an open savepoint's writes commit with the transaction
  last_commit_rows_ = 0;
  // However this ends (an exception included), the transaction's staged operations are gone,
  // and unless the script is known to have applied them, the cached windows of the devices
  // they touched hold acceptances the shared store may not have: those devices are forgotten
  // (a cached window ahead of Redis would refuse the redelivery of a frame never recorded).
  struct End {
    RedisSessionStore& store;
    bool applied = false;
    ~End() {
      if (!applied) store.restore_after_failed_commit();
      store.discard_staged();
    }
  } end{*this};
  if (staged_.empty() && pending_rows_.empty()) {
    end.applied = true;
    return StoreResult{};
  }
  std::vector<std::uint64_t> generations;
  const bool write_ahead = !pending_key_.empty();
  const StoreResult r = run_script(staged_, generations, write_ahead ? &pending_rows_ : nullptr);
  end.applied = r.ok();
  if (r.ok() && write_ahead) last_commit_rows_ = pending_rows_.size();
  return r;
}

StoreResult RedisSessionStore::rollback() {
  if (!in_transaction_) return StoreResult{StoreStatus::transaction_misuse};
  in_transaction_ = false;
  in_savepoint_ = false;
  forget_touched(0, 0);
  discard_staged();
  return StoreResult{};
}

StoreResult RedisSessionStore::savepoint() {
  if (!in_transaction_ || in_savepoint_) return StoreResult{StoreStatus::transaction_misuse};
  in_savepoint_ = true;
  savepoint_mark_ = staged_.size();
  rows_mark_ = pending_rows_.size();
  touched_mark_ = touched_.size();
  return StoreResult{};
}

StoreResult RedisSessionStore::release_savepoint() {
  if (!in_savepoint_) return StoreResult{StoreStatus::transaction_misuse};
  in_savepoint_ = false;
  return StoreResult{};
}

StoreResult RedisSessionStore::rollback_to_savepoint() {
  if (!in_savepoint_) return StoreResult{StoreStatus::transaction_misuse};
  in_savepoint_ = false;
  forget_touched(savepoint_mark_, touched_mark_);
  for (std::size_t i = savepoint_mark_; i < staged_.size(); ++i) {
    snapshots_.erase(staged_[i].key);  // they describe writes that are undone now
    secure_wipe(staged_[i].blob);
  }
  staged_.resize(savepoint_mark_);
  touched_.resize(touched_mark_);
  pending_rows_.resize(rows_mark_);
  pending_row_slots_.resize(rows_mark_);
  return StoreResult{};
}

void RedisSessionStore::restore_after_failed_commit() noexcept {
  for (const WindowBefore& w : windows_before_)
    uplink_.put_back_window(w.key, w.sessctr, w.tag, w.window);
  // The accepts staged without a recorded window (the session was found outside this
  // transaction) cannot be put back: those devices are forgotten.
  for (const std::string& key : touched_) {
    bool recorded = false;
    for (const WindowBefore& w : windows_before_) recorded = recorded || w.key == key;
    if (!recorded) uplink_.erase(key);
  }
  for (const Staged& op : staged_)
    if (op.kind == Kind::save || op.kind == Kind::remove || op.kind == Kind::cred)
      uplink_.erase(op.key);
  for (const std::string& key : conflict_keys_) uplink_.erase(key);
}

void RedisSessionStore::forget_touched(std::size_t staged_from, std::size_t touched_from) noexcept {
  for (std::size_t i = staged_from; i < staged_.size(); ++i) uplink_.erase(staged_[i].key);
  for (std::size_t i = touched_from; i < touched_.size(); ++i) uplink_.erase(touched_[i]);
}

void RedisSessionStore::discard_staged() noexcept {
  for (Staged& s : staged_) secure_wipe(s.blob);
  staged_.clear();
  touched_.clear();
  windows_before_.clear();
  snapshots_.clear();
  pending_rows_.clear();
  pending_row_slots_.clear();
}

StoreResult RedisSessionStore::run_script(const std::vector<Staged>& ops,
                                          std::vector<std::uint64_t>& generations,
                                          const std::vector<std::string>* rows) {
  conflict_keys_.clear();
  if (client_.clustered()) return recorded(run_script_in_slots(ops, generations, rows));
  static const std::vector<std::string> kNoRows;
  std::size_t conflicting = ops.size();
  const StoreResult r =
      script_.run(ops, rows != nullptr ? std::string_view(pending_key_) : std::string_view(),
                  rows != nullptr ? *rows : kNoRows, generations, conflicting);
  // The device whose operation conflicted is the one whose cached view was stale.
  if (conflicting < ops.size()) conflict_keys_.push_back(ops[conflicting].key);
  return recorded(r);
}

}  // namespace dsekp::edge

namespace dsekp::edge {

// A multi-key script must stay in one slot, so on a cluster the transaction's operations go
// in one run per slot, each with the rows of that slot's devices into this edge's list in that
// slot, all of them sent at once (each primary's runs in one write, a WAIT for its replicas
// after them: about one round trip for the whole commit). Atomic per slot, hence per device and
// per message (a message touches one device), not per transaction: runs that conflict or fail
// leave the others applied. The commit then fails as a whole (the daemon handles its messages
// again, finding the applied ones' frames in their windows, and the recovery re-inserts their
// rows from the per-slot lists), as after a lost reply on one server.
StoreResult RedisSessionStore::run_script_in_slots(const std::vector<Staged>& ops,
                                                   std::vector<std::uint64_t>& generations,
                                                   const std::vector<std::string>* rows) {
  std::map<std::uint16_t, std::vector<std::size_t>> op_slots;   // slot -> indices into ops
  std::map<std::uint16_t, std::vector<std::string>> row_slots;  // slot -> its rows
  for (std::size_t i = 0; i < ops.size(); ++i) op_slots[redis::key_slot(ops[i].key)].push_back(i);
  if (rows != nullptr)
    for (std::size_t i = 0; i < rows->size(); ++i) {
      row_slots[pending_row_slots_.at(i)].push_back((*rows)[i]);
      op_slots.try_emplace(pending_row_slots_.at(i));
    }
  generations.assign(ops.size(), 0);
  // Each list starts with this commit's unit mark: a slot's list is replaced only when a later
  // commit touches that slot, so the lists hold rows of many commits, and only the newest
  // commit's can be missing locally (read_pending keeps only those).
  const std::string mark = std::string(kUnitMark) + std::to_string(++unit_);
  if (rows != nullptr) {
    // The set of slots names every list before the list exists (read_pending finds them there).
    std::vector<std::uint16_t> slots;
    for (const auto& entry : op_slots) slots.push_back(entry.first);
    if (StoreResult noted = note_pending_slots(slots); !noted.ok()) return noted;
  }
  std::vector<redis::CommitRun> runs;
  runs.reserve(op_slots.size());
  for (const auto& [slot, indices] : op_slots) {
    redis::CommitRun& run = runs.emplace_back();
    for (std::size_t i : indices) run.ops.push_back(&ops[i]);
    if (rows == nullptr) continue;
    run.pending_key = pending_key_in_slot(pending_key_, slot);
    run.rows.push_back(mark);
    if (const auto found = row_slots.find(slot); found != row_slots.end())
      run.rows.insert(run.rows.end(), found->second.begin(), found->second.end());
  }
  script_.run_all(runs, cluster_wait_);
  StoreResult outcome;
  std::size_t k = 0;
  for (const auto& [slot, indices] : op_slots) {
    const redis::CommitRun& run = runs[k++];
    if (run.result.ok()) {
      for (std::size_t j = 0; j < indices.size(); ++j) generations[indices[j]] = run.generations[j];
      continue;
    }
    if (run.conflicting < indices.size())
      conflict_keys_.push_back(ops[indices[run.conflicting]].key);
    // A failure to store outweighs a conflict: the daemon then waits for the store, as it must.
    if (outcome.ok() || run.result.status == StoreStatus::storage_failure) outcome = run.result;
  }
  return outcome;
}

}  // namespace dsekp::edge
