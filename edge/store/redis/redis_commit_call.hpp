// The commit script (commit_script.lua) as one call: the operations a transaction staged, and
// optionally the rows of an edge's write-ahead list, go to Redis in ONE EVALSHA, which checks
// every generation condition before it writes anything. The answer is each operation's new
// generation, or which operation conflicted (then nothing was written). The script is loaded
// with SCRIPT LOAD once and again when Redis answers NOSCRIPT (a restarted server has an empty
// script cache; NOSCRIPT means nothing ran, so the retry cannot apply a unit twice).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "edge/store/redis/redis_client.hpp"
#include "edge/store/session_store.hpp"

namespace dsekp::edge::redis {

/// The commit script's operation kinds (commit_script.lua).
enum class CommitOpKind : std::uint8_t { save, remove, cred, wput, wacc, wkeep };

/// One staged operation on one device's hash.
struct CommitOp {
  std::string key;
  std::string dev_id;
  CommitOpKind kind = CommitOpKind::save;
  std::string expected;              // "any" or a decimal generation; window kinds: the field
  std::string updated_ms;            // decimal, empty for a remove; window kinds: the tag
  std::uint64_t new_generation = 0;  // what a load reports for a staged save
  std::vector<std::uint8_t> blob;    // the encoded state (cred: the decimal record; window
                                     // kinds: the value); wiped by its owner
};

/// One run of the script for run_all(): operations (the caller's, which must outlive the call)
/// and optionally a pending list with its rows, as for run(); then what came of it.
struct CommitRun {
  std::vector<const CommitOp*> ops;
  std::string pending_key;
  std::vector<std::string> rows;
  StoreResult result;
  std::vector<std::uint64_t> generations;
  std::size_t conflicting = 0;  // as run()'s
};

class CommitScript {
 public:
  /// `client` must outlive this object.
  explicit CommitScript(RedisClient& client) : client_(client) {}

  /// SCRIPT LOAD on the server of `key` (on a cluster each primary has its own script cache):
  /// storage_failure with the reason if the server refuses or cannot be reached.
  StoreResult load(std::string_view key);
  /// Runs the script on `ops`; with a non-empty `pending_key` the list there is replaced by
  /// `rows` in the same run (an empty one deletes it). On success `generations` holds each
  /// operation's generation; on generation_conflict, `conflicting` is the index of the operation
  /// that conflicted, if Redis named it (else ops.size()). Every key (the ops' and the pending
  /// key) must be in one slot on a cluster; there, `wait` follows the run in the same round trip
  /// and a WAIT that saw too few replicas fails it with storage_failure (the run was applied).
  StoreResult run(const std::vector<CommitOp>& ops, std::string_view pending_key,
                  const std::vector<std::string>& rows, std::vector<std::uint64_t>& generations,
                  std::size_t& conflicting, ReplicaWait wait = {});
  /// Every run at once (RedisClient::pipeline_slots): the keys of each in one slot, `wait` after
  /// each primary's runs. Each run's result as run() would give it; runs answered NOSCRIPT
  /// (nothing ran) go again, all at once, after SCRIPT LOAD on every primary. Runs are atomic
  /// each, not together: some may apply where others conflict or fail.
  void run_all(std::vector<CommitRun>& runs, ReplicaWait wait = {});

 private:
  /// EVALSHA's arguments for one run; they point into this object and the run's strings.
  struct Arguments {
    Arguments() = default;
    Arguments(const Arguments&) = delete;
    Arguments& operator=(const Arguments&) = delete;
    std::string op_count;
    std::string key_count;
    std::vector<std::string_view> args;
  };
  void build(Arguments& out, const std::vector<const CommitOp*>& ops, std::string_view pending_key,
             const std::vector<std::string>& rows) const;
  /// SCRIPT LOAD's reply `r` (null: the server could not be reached, for `unreachable`): the
  /// script's sha kept, or why not.
  StoreResult take_sha(const Reply& r, const std::string& unreachable);
  /// The runs `which` at once; those answered NOSCRIPT (nothing ran) into `noscript`.
  void send_all(std::vector<CommitRun>& runs, const std::vector<std::size_t>& which,
                ReplicaWait wait, std::vector<std::size_t>& noscript);
  StoreResult run_one(const std::vector<const CommitOp*>& ops, std::string_view pending_key,
                      const std::vector<std::string>& rows, std::vector<std::uint64_t>& generations,
                      std::size_t& conflicting, ReplicaWait wait);
  /// The script's reply to a run of `op_count` operations (null: the call failed).
  StoreResult read_reply(const Reply& r, std::size_t op_count,
                         std::vector<std::uint64_t>& generations, std::size_t& conflicting) const;

  RedisClient& client_;
  std::string sha_;
};

}  // namespace dsekp::edge::redis
