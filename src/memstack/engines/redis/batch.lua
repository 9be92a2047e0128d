-- The seam's batch interpreter (memstack.engines.redis.lua): KEYS = the batch's keys (then the
-- dedupe key when ARGV[4] is not empty); ARGV = now_ms, bias, probe, dedupe TTL in ms or '',
-- then the ops flat from ARGV[5]: name, argument count, arguments. facts(name) (the family a
-- command needs, its kind letter) comes from the generated prelude.
local sub = string.sub
local call = redis.call
local null = cjson.null
local now = tonumber(ARGV[1])
local bias = tonumber(ARGV[2])
local probe = ARGV[3] == '1'
local dedupe_ms = ARGV[4]

-- The ops are read in place: no table per op. A decoded JSON payload (or a table per op) cost
-- more than the Redis commands of a session put (bench/session_ops.py).
local top = #ARGV
local nkeys = #KEYS
local dkey
if dedupe_ms ~= '' then
  -- A replayed batch: the reply of its first run, and nothing applied twice.
  dkey = KEYS[nkeys]
  nkeys = nkeys - 1
  local seen = call('GET', dkey)
  if seen then
    -- The stored reply is followed by a line with the batch's keys (for a forget to find it).
    local cut = string.find(seen, '\n', 1, true)
    if cut then return sub(seen, 1, cut - 1) end
    return seen
  end
end

local state = {}
if probe then
  for i = 1, nkeys do
    local e = call('PEXPIRETIME', KEYS[i])
    if e == -2 then state[KEYS[i]] = 'none'
    elseif e > 0 and e - bias <= now then call('DEL', KEYS[i]); state[KEYS[i]] = 'none' end
  end
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
-- A guard's verdict; guards come before any write, so pass 1 reads what pass 2 would.
local function guard(name, k, a, c)
  if name == 'require_exists' then return call('EXISTS', k) == 1 end
  if name == 'require_missing' then return call('EXISTS', k) == 0 end
  local t = ktype(k)  -- require_equal
  if t == 'none' then return c == 1 end
  return t == 'string' and c == 2 and call('GET', k) == ARGV[a + 1]
end
local function wrongtype(k, t, fam) return 'MSWRONGTYPE ' .. cjson.encode({k, t, fam}) end

-- Pass 1 (read-only): every check the batch can fail. A failure certain from what is stored
-- returns after it, before any write. An op whose outcome depends on earlier ops of the batch (a
-- container that may have been emptied, a counter written before) is marked risky: pass 2
-- dumps every key it writes before the last risky op, and a failure restores the dumps.
local dirty, risky, last, known = {}, {}, 0, {}
local at, kinds = {}, {}  -- of op i: ARGV index of its first argument, its kind letter
local wrote, misplaced, failure, stopped, verdicts = false, nil, nil, false, {}
-- A failure certain from storage: returned after pass 1 unless an earlier op may fail first
-- (then pass 2 meets them in order).
local function certain(message)
  if last == 0 then failure = failure or message; return false end
  return true
end
local i, p = 0, 5
while p <= top do
  i = i + 1
  local name, c = ARGV[p], tonumber(ARGV[p + 1])
  local a = p + 2
  p = a + c
  local k = ARGV[a]
  local fam, kind = facts(name)
  at[i] = a
  kinds[i] = kind
  if kind == 'g' then
    if wrote then misplaced = misplaced or name
    elseif not stopped then
      -- A failing guard ends the batch: nothing after it can fail it.
      local ok = guard(name, k, a, c)
      verdicts[i] = ok
      stopped = not ok
    end
  elseif kind ~= 'r' then wrote = true end
  if stopped or (c < 2 and kind == 'n') then fam = nil end
  local bad = false
  if fam then
    local s = state[k]
    if s == nil then s = ktype(k); state[k] = s end
    if s ~= 'none' and s ~= fam and s ~= 'maybe:' .. fam then
      if s ~= '?' and sub(s, 1, 6) ~= 'maybe:' then bad = certain(wrongtype(k, s, fam)) else bad = true end
      dirty[k] = true
    end
    if name == 'incr' or name == 'hincr' then
      if not do_incr then incr_helpers() end
      local f = name == 'hincr' and ARGV[a + 1] or nil
      local d = dirty[k]
      if d == true or (f and d and d[f]) then bad = true
      elseif not bad then
        local cur = false
        if s ~= 'none' then
          if f then cur = call('HGET', k, f) else cur = call('GET', k) end
        end
        local why = incr_check(cur, ARGV[a + c - 1])
        if why ~= true then bad = certain('MSNAN ' .. cjson.encode({k, f or null, why}))
        else known[i] = cur end
      end
      if not f then dirty[k] = true
      elseif d ~= true then d = d or {}; d[f] = true; dirty[k] = d end
    elseif name == 'hset' or name == 'hdel' then
      local d = dirty[k]
      if d ~= true then
        d = d or {}
        for j = a + 1, a + c - 1, name == 'hset' and 2 or 1 do d[ARGV[j]] = true end
        dirty[k] = d
      end
    end
    if c >= 2 and (kind == 'c' or kind == 'n') then
      state[k] = fam  -- created
    elseif bad then state[k] = 'maybe:' .. fam
    elseif s ~= 'none' and kind == 's' then
      state[k] = 'maybe:' .. fam  -- may empty (delete) its key
    end
  elseif stopped then  -- nothing after a failing guard runs: no check of it counts
  elseif name == 'set' then
    local nx, xx = false, false
    if c ~= 2 then nx, xx = setflags(a, c) end
    if not nx and not xx then
      state[k] = 'string'
    elseif nx and xx then  -- never sets: the key keeps its type
    else
      local s = state[k]
      if s == nil then s = ktype(k); state[k] = s end
      if s == '?' or sub(s, 1, 6) == 'maybe:' then state[k] = '?'  -- may or may not exist
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
-- The guard order is checked after the arguments (engines._checks) and before anything stored.
if misplaced then return redis.error_reply('MSGUARD ' .. misplaced) end
if failure then return redis.error_reply(failure) end

-- Pass 2: apply, with dumps of keys written before the last risky op.
local saved, savedorder = {}, {}
local function save(k)
  if saved[k] == nil then
    saved[k] = {call('DUMP', k), call('PEXPIRETIME', k)}
    savedorder[#savedorder + 1] = k
  end
end
local function fail(message)
  for _, k in ipairs(savedorder) do
    local s = saved[k]
    call('DEL', k)
    if s[1] then
      if s[2] > 0 then call('RESTORE', k, s[2], s[1], 'ABSTTL') else call('RESTORE', k, 0, s[1]) end
    end
  end
  return redis.error_reply(message)
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
for i = 1, #at do
  local a = at[i]
  local name, c, k, kind = ARGV[a - 2], tonumber(ARGV[a - 1]), ARGV[a], kinds[i]
  if i < last and kind ~= 'r' and kind ~= 'g' and kind ~= 'p' then
    if name == 'delete' then for j = a, a + c - 1 do save(ARGV[j]) end
    elseif name == 'copy_ttl' then for j = a + 1, a + c - 1 do save(ARGV[j]) end
    else save(k) end
  end
  if c < 2 and kind == 'n' then
    name = 'noop'  -- no members: writes nothing
  elseif risky[i] then
    local fam = facts(name)
    local t = fam and ktype(k)
    if fam and t ~= 'none' and t ~= fam then return fail(wrongtype(k, t, fam)) end
  end
  local r = verdicts[i]
  if r ~= nil then  -- a guard, judged in pass 1
  elseif name == 'exists' then
    r = call('EXISTS', k) == 1
  elseif name == 'set' and c == 2 then
    call('SET', k, ARGV[a + 1]); r = true
  elseif name == 'set' then
    local nx, xx, keep, px = setflags(a, c)
    local ex = (nx or xx) and call('EXISTS', k) == 1
    if (nx and ex) or (xx and not ex) then r = false
    else
      if px then call('SET', k, ARGV[a + 1], 'PXAT', now + px + bias)
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
    if r == nil then return fail('MSNAN ' .. cjson.encode({k, f or null, why})) end
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
    return fail('MSBADOP ' .. tostring(name))
  end
  results[i] = r
  if not r and kind == 'g' then
    return cjson.encode({false, results})  -- guards come first: nothing was written
  end
end
for _, a in ipairs(published) do call('PUBLISH', ARGV[a], ARGV[a + 1]) end
local reply = cjson.encode({true, results})
if dkey and wrote then
  local touched = {}
  for j = 1, nkeys do touched[j] = KEYS[j] end
  call('SET', dkey, reply .. '\n' .. cjson.encode(touched), 'PX', dedupe_ms)
end
return reply
