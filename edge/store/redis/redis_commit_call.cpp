// The commit script as one call (see redis_commit_call.hpp).
#include "edge/store/redis/redis_commit_call.hpp"

#include <array>

#include "edge/store/redis/redis_commit_script.hpp"
#include "edge/store/redis/redis_key_slot.hpp"

namespace dsekp::edge::redis {
namespace {

std::string reply_text(const redisReply& r) {
  return std::string(r.str, r.len);
}

std::string_view kind_name(CommitOpKind kind) {
  switch (kind) {
    case CommitOpKind::save:
      return "save";
    case CommitOpKind::remove:
      return "remove";
    case CommitOpKind::cred:
      return "cred";
    case CommitOpKind::wput:
      return "wput";
    case CommitOpKind::wacc:
      return "wacc";
    case CommitOpKind::wkeep:
      return "wkeep";
  }
  return "save";
}

}  // namespace

constexpr std::array<std::string_view, 3> kScriptLoad{"SCRIPT", "LOAD", kCommitScript};

StoreResult CommitScript::load(std::string_view key) {
  return take_sha(client_.command(key, kScriptLoad), client_.last_error());
}

StoreResult CommitScript::take_sha(const Reply& r, const std::string& unreachable) {
  if (r == nullptr) return storage_failure("SCRIPT LOAD: " + unreachable);
  if (r->type != REDIS_REPLY_STRING)
    return storage_failure("SCRIPT LOAD: " + (r->type == REDIS_REPLY_ERROR
                                                  ? reply_text(*r)
                                                  : std::string("unexpected reply")));
  sha_ = reply_text(*r);
  return StoreResult{};
}

StoreResult CommitScript::run(const std::vector<CommitOp>& ops, std::string_view pending_key,
                              const std::vector<std::string>& rows,
                              std::vector<std::uint64_t>& generations, std::size_t& conflicting,
                              ReplicaWait wait) {
  std::vector<const CommitOp*> pointers;
  pointers.reserve(ops.size());
  for (const CommitOp& op : ops) pointers.push_back(&op);
  return run_one(pointers, pending_key, rows, generations, conflicting, wait);
}

void CommitScript::build(Arguments& out, const std::vector<const CommitOp*>& ops,
                         std::string_view pending_key, const std::vector<std::string>& rows) const {
  const bool with_rows = !pending_key.empty();
  out.op_count = std::to_string(ops.size());
  out.key_count = std::to_string(ops.size() + (with_rows ? 1 : 0));
  std::vector<std::string_view>& args = out.args;
  args.clear();
  args.reserve(5 + ops.size() * 5 + (with_rows ? rows.size() : 0));
  args.insert(args.end(), {"EVALSHA", sha_, out.key_count});
  for (const CommitOp* op : ops) args.push_back(op->key);
  if (with_rows) args.push_back(pending_key);
  args.push_back(out.op_count);
  for (const CommitOp* op : ops)
    args.insert(args.end(), {kind_name(op->kind), op->expected, op->updated_ms,
                             std::string_view(reinterpret_cast<const char*>(op->blob.data()),
                                              op->blob.size())});
  if (with_rows)
    for (const std::string& row : rows) args.push_back(row);
}

namespace {

std::string_view route_of(const std::vector<const CommitOp*>& ops, std::string_view pending_key) {
  return ops.empty() ? pending_key : std::string_view(ops.front()->key);
}

bool is_noscript(const Reply& r) {
  return r != nullptr && r->type == REDIS_REPLY_ERROR &&
         std::string_view(r->str, r->len).starts_with("NOSCRIPT");
}

}  // namespace

StoreResult CommitScript::run_one(const std::vector<const CommitOp*>& ops,
                                  std::string_view pending_key,
                                  const std::vector<std::string>& rows,
                                  std::vector<std::uint64_t>& generations, std::size_t& conflicting,
                                  ReplicaWait wait) {
  conflicting = ops.size();
  Arguments a;
  build(a, ops, pending_key, rows);
  const std::string_view route = route_of(ops, pending_key);
  const auto send = [&]() -> Reply {
    if (wait.replicas <= 0) return client_.command(route, a.args);
    std::vector<std::vector<std::string_view>> commands(1);
    commands.front().assign(a.args.begin(), a.args.end());
    std::vector<Reply> replies = client_.pipeline(route, commands, wait);
    return replies.empty() ? nullptr : std::move(replies.front());
  };
  Reply r = send();
  if (is_noscript(r)) {
    if (StoreResult loaded = load(route); !loaded.ok()) return loaded;
    a.args[1] = sha_;
    r = send();
  }
  return read_reply(r, ops.size(), generations, conflicting);
}

void CommitScript::run_all(std::vector<CommitRun>& runs, ReplicaWait wait) {
  std::vector<std::size_t> all(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) all[i] = i;
  std::vector<std::size_t> noscript;
  send_all(runs, all, wait, noscript);
  if (noscript.empty()) return;
  // Primaries without the script (a first commit, a promoted replica, a restarted node): loaded
  // on every primary, then those runs all at once again; nothing of theirs ran.
  StoreResult loaded;
  (void)client_.for_each_primary([&](RedisConnection& node) {
    loaded = take_sha(node.command(kScriptLoad), node.last_error());
    return loaded.ok();
  });
  if (!loaded.ok()) {
    for (std::size_t i : noscript) runs[i].result = loaded;
    return;
  }
  std::vector<std::size_t> still;
  send_all(runs, noscript, wait, still);
  // A primary that lost the script again meanwhile (restarted): one run at a time, each
  // loading it on its own primary.
  for (std::size_t i : still) {
    CommitRun& run = runs[i];
    run.result =
        run_one(run.ops, run.pending_key, run.rows, run.generations, run.conflicting, wait);
  }
}

void CommitScript::send_all(std::vector<CommitRun>& runs, const std::vector<std::size_t>& which,
                            ReplicaWait wait, std::vector<std::size_t>& noscript) {
  noscript.clear();
  std::vector<Arguments> arguments(which.size());
  std::vector<SlotBatch> batches(which.size());
  for (std::size_t k = 0; k < which.size(); ++k) {
    const CommitRun& run = runs[which[k]];
    build(arguments[k], run.ops, run.pending_key, run.rows);
    batches[k].slot = key_slot(route_of(run.ops, run.pending_key));
    batches[k].commands.push_back(arguments[k].args);
  }
  std::vector<std::vector<Reply>> replies = client_.pipeline_slots(batches, wait);
  for (std::size_t k = 0; k < which.size(); ++k) {
    CommitRun& run = runs[which[k]];
    run.conflicting = run.ops.size();
    const Reply r = replies[k].empty() ? nullptr : std::move(replies[k].front());
    if (is_noscript(r)) {
      noscript.push_back(which[k]);
      continue;
    }
    run.result = read_reply(r, run.ops.size(), run.generations, run.conflicting);
  }
}

StoreResult CommitScript::read_reply(const Reply& r, std::size_t op_count,
                                     std::vector<std::uint64_t>& generations,
                                     std::size_t& conflicting) const {
  if (r == nullptr) return storage_failure(client_.last_error());
  if (r->type == REDIS_REPLY_ERROR) return storage_failure("commit script: " + reply_text(*r));
  if (r->type != REDIS_REPLY_ARRAY || r->elements == 0 ||
      r->element[0]->type != REDIS_REPLY_INTEGER)
    return storage_failure("commit script: unexpected reply");
  if (r->element[0]->integer == 0) {
    // {0, i}: operation i (from 1) conflicted.
    if (r->elements == 2 && r->element[1]->type == REDIS_REPLY_INTEGER &&
        r->element[1]->integer >= 1 && static_cast<std::size_t>(r->element[1]->integer) <= op_count)
      conflicting = static_cast<std::size_t>(r->element[1]->integer) - 1;
    return StoreResult{StoreStatus::generation_conflict};
  }
  if (r->elements != op_count + 1) return storage_failure("commit script: unexpected reply");
  generations.clear();
  for (std::size_t i = 1; i < r->elements; ++i) {
    const redisReply& g = *r->element[i];
    if (g.type != REDIS_REPLY_INTEGER || g.integer < 0)
      return storage_failure("commit script: unexpected generation");
    generations.push_back(static_cast<std::uint64_t>(g.integer));
  }
  return StoreResult{};
}

}  // namespace dsekp::edge::redis
