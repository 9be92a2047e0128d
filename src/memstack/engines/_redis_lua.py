"""The Lua interpreter of seam batches, run by the Redis engine as one script per ``execute``.

Call: ``KEYS`` = every key the batch touches; ``ARGV`` = ``now_ms``, ``bias``, ``probe`` (``1``:
purge logically expired keys first), then the ops flat: name, argument count, arguments (all
text; the codec in :mod:`._redis_codec` writes them). Reply: JSON ``[applied, results]``, or an
error reply ``MSWRONGTYPE …`` / ``MSNAN …``.

How it keeps the seam's rules on a server that neither rolls back scripts nor knows our clock:

* Logical expiry: the physical expire-time is the logical one plus ``bias``. With ``probe`` every
  key is purged first if its logical expire-time has passed on the engine clock; without it
  (the system clock, bias -1) Redis' own expiry is already the seam's.
* Atomicity: a read-only first pass marks the ops that may fail (a possible type clash, or an
  increment whose operand it cannot prove valid). Before the last of them, every key is dumped
  before its first write; a failure restores those dumps, so nothing of the batch survives.
* ``publish`` runs after every other op succeeded.

Why flat arguments and not a JSON payload: ``cjson.decode`` builds a table per op, and for a
session put that cost more than every Redis command the script runs (``bench/session_ops.py``).
"""

from __future__ import annotations

__all__ = ["SCRIPT"]

SCRIPT = r"""
local byte, sub = string.byte, string.sub
local now = tonumber(ARGV[1])
local bias = tonumber(ARGV[2])
local call = redis.call
local null = cjson.null

-- The ops are read in place, ARGV from 4 on: name, argument count, arguments. No table per op:
-- a decoded JSON payload (or a table per op) cost more than the Redis commands of a session put.
local top = #ARGV

local state = {}
local probe = ARGV[3] == '1'
if probe then
  for i = 1, #KEYS do
    local e = call('PEXPIRETIME', KEYS[i])
    if e == -2 then state[KEYS[i]] = 'none'
    elseif e > 0 and e - bias <= now then call('DEL', KEYS[i]); state[KEYS[i]] = 'none' end
  end
end

-- Command facts as branches, not tables: a table built on every call costs more than these.
local function famof(name)
  local c = string.byte(name, 1)
  if c == 104 then return 'hash' end  -- h*
  if c == 122 then return 'zset' end  -- z*
  if c == 108 or name == 'rpush' or name == 'rpop' then return 'list' end  -- l*
  if c == 115 then if name == 'set' then return nil end return 'set' end  -- s*
  if name == 'get' or name == 'incr' then return 'string' end
  return nil
end
local function is_creator(name)
  return name == 'incr' or name == 'hincr' or name == 'hset' or name == 'sadd' or name == 'rpush'
    or name == 'lpush' or name == 'zadd'
end
local function is_shrinker(name)
  return name == 'hdel' or name == 'srem' or name == 'ltrim' or name == 'lpop' or name == 'rpop'
    or name == 'zrem'
end
local function is_write(name)
  if is_creator(name) or is_shrinker(name) then return true end
  return name == 'delete' or name == 'pexpire' or name == 'persist' or name == 'copy_ttl' or name == 'set'
end
-- The flags of a set: nx, xx, keepttl, px (nil: none). A plain set has two arguments.
local function setflags(a, c)
  if c ~= 4 then return false, false, false, nil end
  local fl = ARGV[a + 2]
  local px = ARGV[a + 3]
  return string.find(fl, 'n', 1, true) ~= nil, string.find(fl, 'x', 1, true) ~= nil,
    string.find(fl, 'k', 1, true) ~= nil, px ~= '' and tonumber(px) or nil
end

local function ktype(k) return call('TYPE', k)['ok'] end

-- Increments need number parsing and formatting: those closures are built only for a batch
-- that has one (building them cost about a microsecond on every script call).
local numkind, proved_safe, incr_check, do_incr
local function incr_helpers()
  -- JSON number syntax: 'int', 'float' or nil.
  numkind = function(s)
    local p = string.match(s, '^%-?%d+()')
    if not p or string.match(s, '^%-?0%d') then return nil end
    local kind = 'int'
    local q = string.match(s, '^%.%d+()', p)
    if q then p = q; kind = 'float' end
    q = string.match(s, '^[eE][%+%-]?%d+()', p)
    if q then p = q; kind = 'float' end
    if p ~= #s + 1 then return nil end
    return kind
  end

  -- A decimal integer text inside the signed 64-bit range.
  local function in_int64(s)
    local neg = string.sub(s, 1, 1) == '-'
    local digits = neg and string.sub(s, 2) or s
    if #digits < 19 then return true end
    if #digits > 19 then return false end
    return digits <= (neg and '9223372036854775808' or '9223372036854775807')
  end

  local function finite(x) return x == x and x ~= math.huge and x ~= -math.huge end

  -- Python's repr() of a float: the shortest text that reads back as the same double.
  local function pyrepr(x)
    if x == 0 then
      if 1 / x < 0 then return '-0.0' end
      return '0.0'
    end
    local s
    for p = 0, 16 do
      s = string.format('%.' .. p .. 'e', x)
      if tonumber(s) == x then break end
    end
    local sign, lead, frac, ex = string.match(s, '^(%-?)(%d)%.?(%d*)e([%+%-]%d+)$')
    local digits = string.gsub(lead .. frac, '0+$', '')
    local e = tonumber(ex)
    if e < -4 or e >= 16 then
      local m = string.sub(digits, 1, 1)
      if #digits > 1 then m = m .. '.' .. string.sub(digits, 2) end
      local es = e < 0 and '-' or '+'
      local ea = tostring(math.abs(e))
      if #ea < 2 then ea = '0' .. ea end
      return sign .. m .. 'e' .. es .. ea
    end
    if e < 0 then return sign .. '0.' .. string.rep('0', -e - 1) .. digits end
    if #digits <= e + 1 then return sign .. digits .. string.rep('0', e + 1 - #digits) .. '.0' end
    return sign .. string.sub(digits, 1, e + 1) .. '.' .. string.sub(digits, e + 2)
  end

  -- Would cur (stored text or false) + amt (text) be a valid increment? Returns true or a reason.
  incr_check = function(cur, amt)
    if not cur then cur = '0' end
    local ck = numkind(cur)
    if not ck then return 'stored value ' .. string.sub(cur, 1, 60) .. ' is not a JSON number' end
    local ak = numkind(amt)
    if ck == 'int' and not in_int64(cur) then return cur .. ' is out of the 64-bit range' end
    if ck == 'float' and not finite(tonumber(cur)) then return cur .. ' is not finite' end
    if ck == 'int' and ak == 'int' then
      if not in_int64(amt) then return 'the increment would overflow a 64-bit integer' end
      return true
    end
    if not finite(tonumber(cur) + tonumber(amt)) then return 'the increment gives a non-finite number' end
    return true
  end

  -- Can the increment be proved not to overflow before running it? Two integers of fewer than 16
  -- characters sum exactly in a Lua number; anything larger is left to INCRBY, which may refuse it,
  -- so such an op counts as one that may fail (and its batch keeps undo snapshots).
  local function surely_fits(cur, amt)
    cur = cur or '0'
    if numkind(cur) ~= 'int' or numkind(amt) ~= 'int' then return true end
    return #cur < 16 and #amt < 16
  end
  proved_safe = function(cur, amt) return incr_check(cur, amt) == true and surely_fits(cur, amt) end

  do_incr = function(k, f, amt, cur)
    if cur == nil then
      if f then cur = call('HGET', k, f) else cur = call('GET', k) end
      local why = incr_check(cur, amt)
      if why ~= true then return nil, why end
    end
    local ints = (not cur or numkind(cur) == 'int') and numkind(amt) == 'int'
    if ints and #(cur or '') < 16 and #amt < 16 then
      -- Both below 2^53 in magnitude: exact in a Lua number.
      local text = string.format('%d', tonumber(cur or '0') + tonumber(amt))
      if f then call('HSET', k, f, text) else call('SET', k, text, 'KEEPTTL') end
      return text
    end
    if ints then
      if cur == '-0' then
        if f then call('HSET', k, f, '0') else call('SET', k, '0', 'KEEPTTL') end
      end
      local r
      if f then r = redis.pcall('HINCRBY', k, f, amt) else r = redis.pcall('INCRBY', k, amt) end
      if type(r) == 'table' and r.err then return nil, 'the increment would overflow a 64-bit integer' end
      if f then return call('HGET', k, f) end
      return call('GET', k)
    end
    local text = pyrepr(tonumber(cur or '0') + tonumber(amt))
    if f then call('HSET', k, f, text) else call('SET', k, text, 'KEEPTTL') end
    return text
  end
end

-- Pass 1 (read-only): which ops may fail? Written inline, without helper calls: it runs for every
-- op of every batch, and a Lua call cost as much as the work it did (bench/session_ops.py).
local dirty, risky, last, known = {}, {}, 0, {}
local i, p = 0, 4
while p <= top do
  i = i + 1
  local name, c = ARGV[p], tonumber(ARGV[p + 1])
  local a = p + 2
  p = a + c
  local k = ARGV[a]
  local b = byte(name, 1)
  local fam  -- the type a typed command needs (as famof), nil for hset/zadd/sadd without members
  if b == 104 then fam = 'hash'
  elseif b == 122 then fam = 'zset'
  elseif b == 108 or name == 'rpush' or name == 'rpop' then fam = 'list'
  elseif b == 115 then if name ~= 'set' then fam = 'set' end
  elseif name == 'get' or name == 'incr' then fam = 'string' end
  if fam and c < 2 and (name == 'hset' or name == 'zadd' or name == 'sadd') then fam = nil end
  local bad = false
  if fam then
    local s = state[k]
    if s == nil then s = call('TYPE', k)['ok']; state[k] = s end
    if s ~= 'none' and s ~= fam and s ~= 'maybe:' .. fam then bad = true; dirty[k] = true end
    if name == 'incr' or name == 'hincr' then
      if not do_incr then incr_helpers() end
      if name == 'incr' then
        if dirty[k] then bad = true
        elseif not bad then
          local cur = s ~= 'none' and call('GET', k)
          if not proved_safe(cur, ARGV[a + 1]) then bad = true else known[i] = cur end
        end
        dirty[k] = true
      else
        local f = ARGV[a + 1]
        local d = dirty[k]
        if d == true or (d and d[f]) then bad = true
        elseif not bad then
          local cur = s ~= 'none' and call('HGET', k, f)
          if not proved_safe(cur, ARGV[a + 2]) then bad = true else known[i] = cur end
        end
        if d ~= true then d = d or {}; d[f] = true; dirty[k] = d end
      end
    elseif name == 'hset' or name == 'hdel' then
      local d = dirty[k]
      if d ~= true then
        d = d or {}
        for j = a + 1, a + c - 1, name == 'hset' and 2 or 1 do d[ARGV[j]] = true end
        dirty[k] = d
      end
    end
    if name == 'incr' or name == 'hincr' or c >= 2 and (name == 'hset' or name == 'sadd'
        or name == 'rpush' or name == 'lpush' or name == 'zadd') then
      state[k] = fam  -- created
    elseif bad then state[k] = 'maybe:' .. fam
    elseif s ~= 'none' and (name == 'hdel' or name == 'srem' or name == 'ltrim' or name == 'lpop'
        or name == 'rpop' or name == 'zrem') then
      state[k] = 'maybe:' .. fam  -- may empty (delete) its key
    end
  elseif name == 'set' then
    local nx, xx = false, false
    if c ~= 2 then nx, xx = setflags(a, c) end
    if not nx and not xx then
      state[k] = 'string'
    else
      local s = state[k]
      if s == nil then s = call('TYPE', k)['ok']; state[k] = s end
      if s ~= 'none' and s ~= 'string' and sub(s, 1, 6) == 'maybe:' then state[k] = '?'
      elseif nx then if s == 'none' then state[k] = 'string' end
      elseif s ~= 'none' then state[k] = 'string' end
    end
    dirty[k] = true
  elseif name == 'delete' then
    for j = a, a + c - 1 do state[ARGV[j]] = 'none'; dirty[ARGV[j]] = true end
  elseif name == 'pexpire' and tonumber(ARGV[a + 1]) <= 0 then
    state[k] = 'none'; dirty[k] = true
  end
  if bad then risky[i] = true; last = i end
end

-- Pass 2: apply, with dumps of keys written before the last op that may fail.
local saved, savedorder = {}, {}
local function save(k)
  if saved[k] == nil then
    saved[k] = {call('DUMP', k), call('PEXPIRETIME', k)}
    savedorder[#savedorder + 1] = k
  end
end
local function fail(kind, msg)
  for _, k in ipairs(savedorder) do
    local s = saved[k]
    call('DEL', k)
    if s[1] then
      if s[2] > 0 then call('RESTORE', k, s[2], s[1], 'ABSTTL') else call('RESTORE', k, 0, s[1]) end
    end
  end
  return redis.error_reply(kind .. ' ' .. msg)
end

-- cmd over ARGV[from..to], at most per arguments a call (Lua's unpack has a limit).
local function chunked(cmd, k, from, to, per)
  if k and from <= to and to - from < per then return call(cmd, k, unpack(ARGV, from, to)) end
  local total = 0
  while from <= to do
    local j = math.min(from + per - 1, to)
    if k then total = total + call(cmd, k, unpack(ARGV, from, j))
    else total = total + call(cmd, unpack(ARGV, from, j)) end
    from = j + 1
  end
  return total
end
local function orlist(t) if t == false then return null end return t end
local function nulls(t, m) for j = 1, m do if t[j] == false then t[j] = null end end return t end

local results, published = {}, {}
i, p = 0, 4
while p <= top do
  i = i + 1
  local name, c = ARGV[p], tonumber(ARGV[p + 1])
  local a = p + 2
  p = a + c
  local k = ARGV[a]
  if i < last and is_write(name) then
    if name == 'delete' then for j = a, a + c - 1 do save(ARGV[j]) end
    elseif name == 'copy_ttl' then for j = a + 1, a + c - 1 do save(ARGV[j]) end
    else save(k) end
  end
  if c < 2 and (name == 'hset' or name == 'zadd' or name == 'sadd') then
    name = 'noop'  -- no members: writes nothing
  elseif risky[i] and famof(name) then
    local t = ktype(k)
    if t ~= 'none' and t ~= famof(name) then
      return fail('MSWRONGTYPE', cjson.encode({k, t, famof(name)}))
    end
  end
  local r
  if name == 'exists' or name == 'require_exists' then
    r = call('EXISTS', k) == 1
  elseif name == 'set' and c == 2 then
    call('SET', k, ARGV[a + 1]); r = true
  elseif name == 'set' then
    local nx, xx, keep, px = setflags(a, c)
    local ex = (nx or xx) and call('EXISTS', k) == 1
    if (nx and ex) or (xx and not ex) then r = false
    else
      if px then
        if px <= 0 then call('DEL', k) else call('SET', k, ARGV[a + 1], 'PXAT', now + px + bias) end
      elseif keep then call('SET', k, ARGV[a + 1], 'KEEPTTL')
      else call('SET', k, ARGV[a + 1]) end
      r = true
    end
  elseif name == 'sadd' then r = chunked('SADD', k, a + 1, a + c - 1, 4000)
  elseif name == 'rpush' or name == 'lpush' then
    if c < 2 then r = call('LLEN', k) else
      local cmd = name == 'rpush' and 'RPUSH' or 'LPUSH'
      local from, to = a + 1, a + c - 1
      while from <= to do
        local j = math.min(from + 3999, to)
        r = call(cmd, k, unpack(ARGV, from, j))
        from = j + 1
      end
    end
  elseif name == 'copy_ttl' then
    local e = call('PEXPIRETIME', k)
    r = 0
    if e > 0 then
      for j = a + 1, a + c - 1 do
        local d = ARGV[j]
        if call('EXISTS', d) == 1 then call('PEXPIREAT', d, e); r = r + 1 end
      end
    end
  elseif name == 'require_missing' then
    r = call('EXISTS', k) == 0
  elseif name == 'require_equal' then
    local t = ktype(k)
    if t == 'none' then r = c == 1
    elseif t == 'string' then r = c == 2 and call('GET', k) == ARGV[a + 1]
    else r = false end
  elseif name == 'delete' then
    r = chunked('DEL', nil, a, a + c - 1, 4000)
  elseif name == 'pexpire' then
    local ms = tonumber(ARGV[a + 1])
    if call('EXISTS', k) == 0 then r = false
    elseif ms <= 0 then call('DEL', k); r = true
    else call('PEXPIREAT', k, now + ms + bias); r = true end
  elseif name == 'persist' then
    r = call('PERSIST', k) == 1
  elseif name == 'pttl' then
    if probe then
      local e = call('PEXPIRETIME', k)
      if e < 0 then r = e else r = e - bias - now end
    else  -- Redis decides liveness on its clock: the remaining time on that clock too
      r = call('PTTL', k)
      if r >= 0 then r = r - bias end
    end
  elseif name == 'get' then
    r = orlist(call('GET', k))
  elseif name == 'mget' then
    if c < 1 then r = {} else r = nulls(call('MGET', unpack(ARGV, a, a + c - 1)), c) end
  elseif name == 'incr' or name == 'hincr' then
    local why, f
    if name == 'incr' then r, why = do_incr(k, nil, ARGV[a + 1], known[i])
    else f = ARGV[a + 1]; r, why = do_incr(k, f, ARGV[a + 2], known[i]) end
    if r == nil then return fail('MSNAN', cjson.encode({k, f or null, why})) end
  elseif name == 'hset' then
    r = chunked('HSET', k, a + 1, a + c - 1, 4000)
  elseif name == 'hget' then
    r = orlist(call('HGET', k, ARGV[a + 1]))
  elseif name == 'hmget' then
    if c < 2 then r = {} else r = nulls(call('HMGET', k, unpack(ARGV, a + 1, a + c - 1)), c - 1) end
  elseif name == 'hgetall' then r = call('HGETALL', k)
  elseif name == 'hkeys' then r = call('HKEYS', k)
  elseif name == 'hlen' then r = call('HLEN', k)
  elseif name == 'hdel' then r = chunked('HDEL', k, a + 1, a + c - 1, 4000)
  elseif name == 'srem' then r = chunked('SREM', k, a + 1, a + c - 1, 4000)
  elseif name == 'smembers' then r = call('SMEMBERS', k)
  elseif name == 'sismember' then r = call('SISMEMBER', k, ARGV[a + 1]) == 1
  elseif name == 'scard' then r = call('SCARD', k)
  elseif name == 'lrange' then r = call('LRANGE', k, ARGV[a + 1], ARGV[a + 2])
  elseif name == 'llen' then r = call('LLEN', k)
  elseif name == 'lindex' then r = orlist(call('LINDEX', k, ARGV[a + 1]))
  elseif name == 'ltrim' then call('LTRIM', k, ARGV[a + 1], ARGV[a + 2]); r = null
  elseif name == 'lpop' then r = orlist(call('LPOP', k))
  elseif name == 'rpop' then r = orlist(call('RPOP', k))
  elseif name == 'zadd' then r = chunked('ZADD', k, a + 1, a + c - 1, 4000)
  elseif name == 'zrem' then r = chunked('ZREM', k, a + 1, a + c - 1, 4000)
  elseif name == 'zscore' then r = orlist(call('ZSCORE', k, ARGV[a + 1]))
  elseif name == 'zcard' then r = call('ZCARD', k)
  elseif name == 'zrange' then
    if ARGV[a + 3] == '1' then r = call('ZRANGE', k, ARGV[a + 1], ARGV[a + 2], 'REV', 'WITHSCORES')
    else r = call('ZRANGE', k, ARGV[a + 1], ARGV[a + 2], 'WITHSCORES') end
  elseif name == 'zrangebyscore' then
    local lo, hi, off, num = ARGV[a + 1], ARGV[a + 2], ARGV[a + 4], ARGV[a + 5]
    if ARGV[a + 3] == '1' then
      r = call('ZRANGE', k, hi, lo, 'BYSCORE', 'REV', 'LIMIT', off, num, 'WITHSCORES')
    else
      r = call('ZRANGE', k, lo, hi, 'BYSCORE', 'LIMIT', off, num, 'WITHSCORES')
    end
  elseif name == 'noop' then
    r = 0
  elseif name == 'publish' then
    published[#published + 1] = a
    r = null
  else
    return redis.error_reply('MSBADOP ' .. tostring(name))
  end
  results[i] = r
  name = ARGV[a - 2]
  if (name == 'require_exists' or name == 'require_missing' or name == 'require_equal') and not r then
    return cjson.encode({false, results})
  end
end
for _, a in ipairs(published) do call('PUBLISH', ARGV[a], ARGV[a + 1]) end
return cjson.encode({true, results})
"""
