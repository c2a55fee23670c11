#!lua
-- The Lua script through which every write of the Redis session store reaches Redis: the staged
-- saves and removes of one transaction (or a single save/remove outside one) are checked and
-- applied by one script run, which Redis executes atomically (no other command runs in between).
--
-- Arguments. ARGV[1] is n, the number of operations. KEYS[i] (i <= n) is the hash of the i-th
-- operation's device; ARGV[2..4n+1] hold four arguments per operation: kind ("save", "remove",
-- or one of the kinds below), the expected generation ("any", or a decimal generation, "0" meaning
-- "must not exist"), the update time in ms and the encoded state (the last two empty for a remove).
-- Operations apply in order, so a transaction may touch a device twice.
--
-- Write-ahead of the sink rows (docs/SCALING.md "Running several edges"): if KEYS has an entry
-- n+1, it is the committing edge's pending-rows list. When every condition holds, the script
-- replaces that list with ARGV[4n+2..] (the unit's accepted rows, one encoded row per element;
-- none: the list is deleted), in the same atomic run as the states. The edge then commits the
-- rows locally; the list is what a restarted edge re-inserts if it died in between. Without a
-- KEYS[n+1] nothing else is written (single saves and removes outside a transaction).
--
-- Two phases: first every generation condition is checked against the stored generations (as
-- updated by the earlier operations of the same run), and only if all hold is anything written.
-- A failed condition returns {0, i} (operation i conflicted, nothing written); success returns
-- {1, g1, ..., gn}, the generation each operation left (0 after a remove). A key that is not
-- such a hash (WRONGTYPE) or holds a non-numeric generation raises an error in the first
-- phase, also before anything is written. The `#!lua` line makes Redis 7 refuse the whole script
-- up front under an out-of-memory condition instead of failing at a write half-way.
--
-- Window kinds (edge/store/redis/redis_window_field.hpp has the field layout; the four arguments
-- are kind, field name, tag, value):
--   "wput"  sets window field `w:<sessctr>` to the given value (a session the state establishes);
--   "wacc"  accepts seqs into a window: the value is "W seq1 seq2 ...". Each seq must be new and
--           within W of the highest, and the field must exist with the given session tag;
--           otherwise the operation conflicts ({0, i}, nothing written), like a failed
--           generation condition. It leaves the generation alone, so frames of one session
--           accepted by different edges never conflict with each other;
--   "wkeep" deletes every window field not named in the space-separated value (the sessions a
--           saved state no longer holds).
-- Window operations are simulated in the first phase on the fields as the earlier operations of
-- the run leave them (a remove deletes them all), so a run that accepts a seq twice conflicts.
-- Their result entries are 0.
--
-- A third kind, "cred", records the device's registry credential generation next to its state
-- (field cred; the fourth argument is the decimal generation, or empty to delete the field). It
-- checks nothing and leaves the save counter alone; it exists so that the record commits with the
-- state it describes (edge/store/redis/redis_credential_generations.hpp). Its result entry is the
-- counter as it stands.
--
-- Hash fields: state (device_state_codec encoding), gen (decimal, 1 after the first save, +1 per
-- save; a remove deletes the hash, so generations restart at 1 as in the SQLite store),
-- updated_ms (decimal), cred (see above), w:<sessctr> (window fields).
local n = tonumber(ARGV[1])
if n == nil or n < 0 or #KEYS < n or #KEYS > n + 1 then
  return redis.error_reply('DSEKPBADARGS operation count does not match the keys')
end
local RING = 128
local gens = {}
local result = {1}
-- Window fields as the operations before the current one leave them: wf[key][field] is the
-- value or false (deleted); wall[key] means wf[key] is complete (the hash was removed).
local wf, wall, vals, dels = {}, {}, {}, {}
local function wtable(key)
  local t = wf[key]
  if t == nil then t = {}; wf[key] = t end
  return t
end
local function wget(key, field)
  local t = wtable(key)
  local v = t[field]
  if v == nil then
    if wall[key] then v = false else v = redis.call('HGET', key, field) end
    t[field] = v
  end
  return v
end
local function bitpos(seq)
  local p = seq % 1024
  return math.floor(p / 8) + 1, bit.lshift(1, p % 8)
end
-- Accepts every seq of `list` ("W seq1 seq2 ...") into the window value `v` of session `tag`;
-- nil if one of them is refused (replay, too old) or `v` is not that session's window.
local function accept(v, tag, list)
  if not v or #v ~= 42 + RING or string.sub(v, 1, 32) ~= tag then return nil end
  local digits = string.sub(v, 33, 42)
  if not string.match(digits, '^%d+$') then return nil end
  local top = tonumber(digits)
  if top > 4294967296 then return nil end
  local ring = {string.byte(v, 43, 42 + RING)}
  local w = nil
  for word in string.gmatch(list, '%d+') do
    local x = tonumber(word)
    if w == nil then
      w = x
    elseif x >= top then
      if x + 1 - top >= 1024 then
        for j = 1, RING do ring[j] = 0 end
      else
        for s = top, x - 1 do
          local b, m = bitpos(s)
          ring[b] = bit.band(ring[b], bit.bnot(m))
        end
      end
      local b, m = bitpos(x)
      ring[b] = bit.bor(ring[b], m)
      top = x + 1
    else
      if top - 1 - x >= w then return nil end
      local b, m = bitpos(x)
      if bit.band(ring[b], m) ~= 0 then return nil end
      ring[b] = bit.bor(ring[b], m)
    end
  end
  if w == nil then return nil end
  return tag .. string.format('%010d', top) .. string.char(unpack(ring))
end
for i = 1, n do
  local key, kind, x, y, z = KEYS[i], ARGV[4 * i - 2], ARGV[4 * i - 1], ARGV[4 * i], ARGV[4 * i + 1]
  if kind == 'save' or kind == 'remove' or kind == 'cred' then
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
      if x ~= 'any' and tonumber(x) ~= g then return {0, i} end
      g = g + 1
    elseif kind == 'remove' then
      g = 0
      wf[key] = {}
      wall[key] = true
    end
    gens[key] = g
    result[i + 1] = g
  elseif kind == 'wput' then
    wtable(key)[x] = z
    vals[i] = z
    result[i + 1] = 0
  elseif kind == 'wacc' then
    local v = accept(wget(key, x), y, z)
    if v == nil then return {0, i} end
    wtable(key)[x] = v
    vals[i] = v
    result[i + 1] = 0
  elseif kind == 'wkeep' then
    local keep = {}
    for f in string.gmatch(z, '%S+') do keep[f] = true end
    local t = wtable(key)
    local names = {}
    if not wall[key] then
      for _, f in ipairs(redis.call('HKEYS', key)) do names[f] = true end
    end
    for f, v in pairs(t) do if v then names[f] = true end end
    local gone = {}
    for f, _ in pairs(names) do
      if string.sub(f, 1, 2) == 'w:' and not keep[f] and wget(key, f) then
        gone[#gone + 1] = f
        t[f] = false
      end
    end
    dels[i] = gone
    result[i + 1] = 0
  else
    return redis.error_reply('DSEKPBADOP unknown operation ' .. tostring(kind))
  end
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
  elseif kind == 'remove' then
    redis.call('DEL', key)
  elseif kind == 'wput' or kind == 'wacc' then
    redis.call('HSET', key, ARGV[4 * i - 1], vals[i])
  elseif kind == 'wkeep' then
    if #dels[i] > 0 then redis.call('HDEL', key, unpack(dels[i])) end
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
