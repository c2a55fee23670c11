// SessionStore on Redis (see redis_session_store.hpp).
#include "redis_session_store.hpp"

#include <array>
#include <charconv>
#include <utility>

#include "redis_commit_script.hpp"

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

RedisSessionStore::RedisSessionStore(const RedisStoreOptions& options) noexcept
    : connection_(options.endpoint), prefix_(options.prefix) {}

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
  std::unique_ptr<RedisSessionStore> store(new RedisSessionStore(options));
  if (!store->connection_.connect() || !store->load_script()) {
    error = store->connection_.last_error().empty() ? store->last_error_
                                                    : store->connection_.last_error();
    return nullptr;
  }
  return store;
}

std::string RedisSessionStore::key_of(const DevId& dev_id) const {
  std::string key;
  key.reserve(prefix_.size() + dev_id.size() + 6);
  key.append(prefix_).append("dev:{").append(dev_id.str()).append("}");
  return key;
}

std::string RedisSessionStore::pending_key_of(std::string_view edge_id) const {
  std::string key;
  key.reserve(prefix_.size() + edge_id.size() + 10);
  key.append(prefix_).append("pending:{").append(edge_id).append("}");
  return key;
}

StoreResult RedisSessionStore::stage_pending_row(std::string row) {
  if (!in_transaction_) return StoreResult{StoreStatus::transaction_misuse};
  pending_rows_.push_back(std::move(row));
  return StoreResult{};
}

StoreResult RedisSessionStore::read_pending(const std::string& key,
                                            std::vector<std::string>& rows) {
  rows.clear();
  const std::array<std::string_view, 4> args{"LRANGE", key, "0", "-1"};
  const Reply r = connection_.command(args);
  if (r == nullptr) return failure(connection_.last_error());
  if (is_error(r)) return failure("LRANGE " + key + ": " + reply_text(*r));
  if (r->type != REDIS_REPLY_ARRAY) return failure("LRANGE: unexpected reply");
  for (std::size_t i = 0; i < r->elements; ++i) {
    const redisReply& e = *r->element[i];
    if (e.type != REDIS_REPLY_STRING) return failure("LRANGE: unexpected element");
    rows.emplace_back(e.str, e.len);
  }
  return StoreResult{};
}

StoreResult RedisSessionStore::clear_pending(const std::string& key) {
  const std::array<std::string_view, 2> args{"DEL", key};
  const Reply r = connection_.command(args);
  if (r == nullptr) return failure(connection_.last_error());
  if (is_error(r)) return failure("DEL " + key + ": " + reply_text(*r));
  return StoreResult{};
}

StoreResult RedisSessionStore::failure(std::string why) {
  last_error_ = std::move(why);
  return StoreResult{StoreStatus::storage_failure};
}

bool RedisSessionStore::load_script() {
  const std::array<std::string_view, 3> args{"SCRIPT", "LOAD", redis::kCommitScript};
  const Reply r = connection_.command(args);
  if (r == nullptr) {
    last_error_ = connection_.last_error();
    return false;
  }
  if (r->type != REDIS_REPLY_STRING) {
    last_error_ =
        "SCRIPT LOAD: " + (is_error(r) ? reply_text(*r) : std::string("unexpected reply"));
    return false;
  }
  script_sha_ = reply_text(*r);
  return true;
}

// The newest staged operation on `key` of the kind asked for: cred records for
// load_credential(), saves and removes (which decide the state) for load(). A remove also ends
// any cred record staged before it (it deletes the whole hash).
const RedisSessionStore::Staged* RedisSessionStore::find_staged(const std::string& key,
                                                                Kind wanted) const noexcept {
  for (auto it = staged_.rbegin(); it != staged_.rend(); ++it) {
    if (it->key != key) continue;
    if (wanted == Kind::cred ? it->kind != Kind::save : it->kind != Kind::cred) return &*it;
  }
  return nullptr;
}

StoreResult RedisSessionStore::load(const DevId& dev_id, EdgeDeviceState& out,
                                    std::uint64_t& generation) {
  out = EdgeDeviceState{};
  generation = kAbsentGeneration;
  const std::string key = key_of(dev_id);
  // A staged state was derived from an earlier load in this transaction: the cred field cached
  // then (if it is still this device's) belongs to the same snapshot, so it is kept.
  if (const Staged* s = find_staged(key, Kind::save)) {  // this transaction's own write
    if (s->kind == Kind::remove) return StoreResult{};
    generation = s->new_generation;
    const StateCodecError e = decode_device_state(s->blob, &dev_id, out);
    return StoreResult{e == StateCodecError::ok ? StoreStatus::ok : StoreStatus::corrupt_state, e};
  }
  loaded_key_.clear();
  loaded_cred_.reset();
  const std::array<std::string_view, 5> args{"HMGET", key, "state", "gen", "cred"};
  const Reply r = connection_.command(args);
  if (r == nullptr) return failure(connection_.last_error());
  if (is_error(r)) return failure("HMGET " + key + ": " + reply_text(*r));
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 3) return failure("HMGET: unexpected reply");
  const redisReply& state = *r->element[0];
  const redisReply& gen = *r->element[1];
  const redisReply& cred = *r->element[2];
  loaded_key_ = key;
  if (std::uint64_t c = 0;
      cred.type == REDIS_REPLY_STRING && parse_u64(std::string_view(cred.str, cred.len), c))
    loaded_cred_ = c;
  if (state.type == REDIS_REPLY_NIL && gen.type == REDIS_REPLY_NIL) return StoreResult{};
  // A hash with a state but no (numeric) generation, or the reverse, was not written by the
  // commit script: report it as corrupt rather than guess a generation.
  if (state.type != REDIS_REPLY_STRING || gen.type != REDIS_REPLY_STRING ||
      !parse_u64(std::string_view(gen.str, gen.len), generation) ||
      generation == kAbsentGeneration || generation == kAnyGeneration) {
    generation = kAbsentGeneration;
    return StoreResult{StoreStatus::corrupt_state, StateCodecError::inconsistent_state};
  }
  // Decoded straight from hiredis's reply buffer, which the Reply frees (not wiped: hiredis
  // owns it; the bytes are the same the server holds in memory anyway).
  const StateCodecError e = decode_device_state(
      ByteView(reinterpret_cast<const std::uint8_t*>(state.str), state.len), &dev_id, out);
  if (e != StateCodecError::ok) return StoreResult{StoreStatus::corrupt_state, e};
  return StoreResult{};
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
  if (in_transaction_) {
    op.new_generation = generation == kAnyGeneration ? kAnyGeneration : generation + 1;
    generation = op.new_generation;
    staged_.push_back(std::move(op));
    return StoreResult{};
  }
  std::vector<Staged> ops;
  ops.push_back(std::move(op));
  std::vector<std::uint64_t> generations;
  const StoreResult r = run_script(ops, generations);
  secure_wipe(ops.front().blob);
  if (r.ok()) generation = generations.front();
  return r;
}

StoreResult RedisSessionStore::remove(const DevId& dev_id) {
  Staged op;
  op.key = key_of(dev_id);
  op.dev_id = std::string(dev_id.str());
  op.kind = Kind::remove;
  op.expected = "any";
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
  const Reply r = connection_.command(args);
  if (r == nullptr) return failure(connection_.last_error());
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
  if (staged_.empty() && pending_rows_.empty()) return StoreResult{};
  std::vector<std::uint64_t> generations;
  const bool write_ahead = !pending_key_.empty();
  const StoreResult r = run_script(staged_, generations, write_ahead ? &pending_rows_ : nullptr);
  if (r.ok() && write_ahead) last_commit_rows_ = pending_rows_.size();
  discard_staged();
  return r;
}

StoreResult RedisSessionStore::rollback() {
  if (!in_transaction_) return StoreResult{StoreStatus::transaction_misuse};
  in_transaction_ = false;
  in_savepoint_ = false;
  discard_staged();
  return StoreResult{};
}

StoreResult RedisSessionStore::savepoint() {
  if (!in_transaction_ || in_savepoint_) return StoreResult{StoreStatus::transaction_misuse};
  in_savepoint_ = true;
  savepoint_mark_ = staged_.size();
  rows_mark_ = pending_rows_.size();
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
  for (std::size_t i = savepoint_mark_; i < staged_.size(); ++i) secure_wipe(staged_[i].blob);
  staged_.resize(savepoint_mark_);
  pending_rows_.resize(rows_mark_);
  return StoreResult{};
}

void RedisSessionStore::discard_staged() noexcept {
  for (Staged& s : staged_) secure_wipe(s.blob);
  staged_.clear();
  pending_rows_.clear();
}

StoreResult RedisSessionStore::run_script(std::vector<Staged>& ops,
                                          std::vector<std::uint64_t>& generations,
                                          const std::vector<std::string>* rows) {
  const std::string op_count = std::to_string(ops.size());
  const std::string key_count = std::to_string(ops.size() + (rows != nullptr ? 1 : 0));
  std::vector<std::string_view> args;
  args.reserve(5 + ops.size() * 5 + (rows != nullptr ? rows->size() : 0));
  args.insert(args.end(), {"EVALSHA", script_sha_, key_count});
  for (const Staged& op : ops) args.push_back(op.key);
  if (rows != nullptr) args.push_back(pending_key_);
  args.push_back(op_count);
  for (const Staged& op : ops) {
    const std::string_view kind = op.kind == Kind::save     ? "save"
                                  : op.kind == Kind::remove ? "remove"
                                                            : "cred";
    args.insert(args.end(), {kind, op.expected, op.updated_ms, as_chars(op.blob)});
  }
  if (rows != nullptr)
    for (const std::string& row : *rows) args.push_back(row);
  Reply r = connection_.command(args);
  if (r != nullptr && is_error(r) && std::string_view(r->str, r->len).starts_with("NOSCRIPT")) {
    // The server lost its script cache (restart, SCRIPT FLUSH): load it again, retry once.
    // NOSCRIPT means nothing ran, so the retry cannot apply the unit twice.
    if (!load_script()) return failure(last_error_);
    args[1] = script_sha_;
    r = connection_.command(args);
  }
  if (r == nullptr) return failure(connection_.last_error());
  if (is_error(r)) return failure("commit script: " + reply_text(*r));
  if (r->type != REDIS_REPLY_ARRAY || r->elements == 0 ||
      r->element[0]->type != REDIS_REPLY_INTEGER)
    return failure("commit script: unexpected reply");
  if (r->element[0]->integer == 0) return StoreResult{StoreStatus::generation_conflict};
  if (r->elements != ops.size() + 1) return failure("commit script: unexpected reply");
  generations.clear();
  for (std::size_t i = 1; i < r->elements; ++i) {
    const redisReply& g = *r->element[i];
    if (g.type != REDIS_REPLY_INTEGER || g.integer < 0)
      return failure("commit script: unexpected generation");
    generations.push_back(static_cast<std::uint64_t>(g.integer));
  }
  return StoreResult{};
}

}  // namespace dsekp::edge
