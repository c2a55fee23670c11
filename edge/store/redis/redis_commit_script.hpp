// The Lua script through which every write of the Redis session store reaches Redis: the staged
// saves and removes of one transaction (or a single save/remove outside one) are checked and
// applied by one script run, which Redis executes atomically (no other command runs in between).
//
// Arguments. ARGV[1] is n, the number of operations. KEYS[i] (i <= n) is the hash of the i-th
// operation's device; ARGV[2..4n+1] hold four arguments per operation: kind ("save" or
// "remove"), the expected generation ("any", or a decimal generation, "0" meaning "must not
// exist"), the update time in ms and the encoded state (the last two empty for a remove).
// Operations apply in order, so a transaction may touch a device twice.
//
// Write-ahead of the sink rows (docs/SCALING.md "Running several edges"): if KEYS has an entry
// n+1, it is the committing edge's pending-rows list. When every condition holds, the script
// replaces that list with ARGV[4n+2..] (the unit's accepted rows, one encoded row per element;
// none: the list is deleted), in the same atomic run as the states. The edge then commits the
// rows locally; the list is what a restarted edge re-inserts if it died in between. Without a
// KEYS[n+1] nothing else is written (single saves and removes outside a transaction).
//
// Two phases: first every generation condition is checked against the stored generations (as
// updated by the earlier operations of the same run), and only if all hold is anything written.
// A failed condition returns {0, i} (operation i conflicted, nothing written); success returns
// {1, g1, ..., gn}, the generation each operation left (0 after a remove). A key that is not
// such a hash (WRONGTYPE) or holds a non-numeric generation raises an error in the first
// phase, also before anything is written. The `#!lua` line makes Redis 7 refuse the whole script
// up front under an out-of-memory condition instead of failing at a write half-way.
//
// A third kind, "cred", records the device's registry credential generation next to its state
// (field cred; the fourth argument is the decimal generation, or empty to delete the field). It
// checks nothing and leaves the save counter alone; it exists so that the record commits with the
// state it describes (edge/store/redis/redis_credential_generations.hpp). Its result entry is the
// counter as it stands.
//
// Hash fields: state (device_state_codec encoding), gen (decimal, 1 after the first save, +1 per
// save; a remove deletes the hash, so generations restart at 1 as in the SQLite store),
// updated_ms (decimal).
#pragma once

#include <string_view>

namespace dsekp::edge::redis {

inline constexpr std::string_view kCommitScript = R"lua(#!lua
local n = tonumber(ARGV[1])
if n == nil or n < 0 or #KEYS < n or #KEYS > n + 1 then
  return redis.error_reply('DSEKPBADARGS operation count does not match the keys')
end
local gens = {}
local result = {1}
for i = 1, n do
  local key, kind, want = KEYS[i], ARGV[4 * i - 2], ARGV[4 * i - 1]
  local g = gens[key]
  if g == nil then
    local stored = redis.call('HGET', key, 'gen')
    g = 0
    if stored then
      g = tonumber(stored)
      if g == nil then return redis.error_reply('DSEKPBADGEN non-numeric generation in ' .. key) end
    end
  end
  if kind == 'save' then
    if want ~= 'any' and tonumber(want) ~= g then return {0, i} end
    g = g + 1
  elseif kind == 'remove' then
    g = 0
  elseif kind ~= 'cred' then
    return redis.error_reply('DSEKPBADOP unknown operation ' .. tostring(kind))
  end
  gens[key] = g
  result[i + 1] = g
end
for i = 1, n do
  local key = KEYS[i]
  local kind = ARGV[4 * i - 2]
  if kind == 'save' then
    redis.call('HSET', key, 'state', ARGV[4 * i + 1], 'gen', string.format('%d', result[i + 1]),
               'updated_ms', ARGV[4 * i])
  elseif kind == 'cred' then
    if ARGV[4 * i + 1] == '' then
      redis.call('HDEL', key, 'cred')
    else
      redis.call('HSET', key, 'cred', ARGV[4 * i + 1])
    end
  else
    redis.call('DEL', key)
  end
end
if #KEYS == n + 1 then
  local pending = KEYS[n + 1]
  redis.call('DEL', pending)
  local first = 4 * n + 2
  -- In chunks: unpack() of many thousands of arguments would overflow Lua's stack.
  while first <= #ARGV do
    local last = math.min(first + 999, #ARGV)
    redis.call('RPUSH', pending, unpack(ARGV, first, last))
    first = last + 1
  end
end
return result
)lua";

}  // namespace dsekp::edge::redis
