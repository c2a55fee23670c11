// The commit script as one call (see redis_commit_call.hpp).
#include "edge/store/redis/redis_commit_call.hpp"

#include <array>

#include "edge/store/redis/redis_commit_script.hpp"

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

StoreResult CommitScript::load(std::string_view key) {
  const std::array<std::string_view, 3> args{"SCRIPT", "LOAD", kCommitScript};
  const Reply r = client_.command(key, args);
  if (r == nullptr) return storage_failure(client_.last_error());
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
  conflicting = ops.size();
  const bool with_rows = !pending_key.empty();
  const std::string op_count = std::to_string(ops.size());
  const std::string key_count = std::to_string(ops.size() + (with_rows ? 1 : 0));
  std::vector<std::string_view> args;
  args.reserve(5 + ops.size() * 5 + (with_rows ? rows.size() : 0));
  args.insert(args.end(), {"EVALSHA", sha_, key_count});
  for (const CommitOp& op : ops) args.push_back(op.key);
  if (with_rows) args.push_back(pending_key);
  args.push_back(op_count);
  for (const CommitOp& op : ops)
    args.insert(args.end(),
                {kind_name(op.kind), op.expected, op.updated_ms,
                 std::string_view(reinterpret_cast<const char*>(op.blob.data()), op.blob.size())});
  if (with_rows)
    for (const std::string& row : rows) args.push_back(row);
  const std::string_view route = ops.empty() ? pending_key : std::string_view(ops.front().key);
  const auto send = [&]() -> Reply {
    if (wait.replicas <= 0) return client_.command(route, args);
    std::vector<std::vector<std::string_view>> commands(1);
    commands.front().assign(args.begin(), args.end());
    std::vector<Reply> replies = client_.pipeline(route, commands, wait);
    return replies.empty() ? nullptr : std::move(replies.front());
  };
  Reply r = send();
  if (r != nullptr && r->type == REDIS_REPLY_ERROR &&
      std::string_view(r->str, r->len).starts_with("NOSCRIPT")) {
    if (StoreResult loaded = load(route); !loaded.ok()) return loaded;
    args[1] = sha_;
    r = send();
  }
  if (r == nullptr) return storage_failure(client_.last_error());
  if (r->type == REDIS_REPLY_ERROR) return storage_failure("commit script: " + reply_text(*r));
  if (r->type != REDIS_REPLY_ARRAY || r->elements == 0 ||
      r->element[0]->type != REDIS_REPLY_INTEGER)
    return storage_failure("commit script: unexpected reply");
  if (r->element[0]->integer == 0) {
    // {0, i}: operation i (from 1) conflicted.
    if (r->elements == 2 && r->element[1]->type == REDIS_REPLY_INTEGER &&
        r->element[1]->integer >= 1 &&
        static_cast<std::size_t>(r->element[1]->integer) <= ops.size())
      conflicting = static_cast<std::size_t>(r->element[1]->integer) - 1;
    return StoreResult{StoreStatus::generation_conflict};
  }
  if (r->elements != ops.size() + 1) return storage_failure("commit script: unexpected reply");
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
