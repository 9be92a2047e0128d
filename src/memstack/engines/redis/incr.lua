-- Increments of the seam's batch script (memstack.engines.redis.lua): JSON-number parsing,
-- 64-bit bounds, Python's float formatting. The closures are built only for a batch that has an
-- increment (building them cost about a microsecond on every script call).
local numkind, proved_safe, incr_check, do_incr
local function incr_helpers()
  local call = redis.call
  local byte, sub = string.byte, string.sub

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
    local neg = sub(s, 1, 1) == '-'
    local digits = neg and sub(s, 2) or s
    if #digits < 19 then return true end
    if #digits > 19 then return false end
    return digits <= (neg and '9223372036854775808' or '9223372036854775807')
  end

  -- The sum of two digit strings without leading zeros, exactly (Lua numbers stop at 2^53).
  local function digits_sum(x, y)
    local out, carry = {}, 0
    local i, j = #x, #y
    while i > 0 or j > 0 or carry > 0 do
      local d = carry + (i > 0 and byte(x, i) - 48 or 0) + (j > 0 and byte(y, j) - 48 or 0)
      carry = d >= 10 and 1 or 0
      out[#out + 1] = string.char(48 + d % 10)
      i = i - 1; j = j - 1
    end
    return string.reverse(table.concat(out))
  end

  -- Does the sum of two 64-bit integer texts stay inside 64 bits? Exact, so an overflow is
  -- known before the batch writes anything.
  local function sum_fits(cur, amt)
    local cn, an = sub(cur, 1, 1) == '-', sub(amt, 1, 1) == '-'
    if cn ~= an then return true end
    local total = digits_sum(cn and sub(cur, 2) or cur, an and sub(amt, 2) or amt)
    return in_int64((cn and '-' or '') .. total)
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
      local m = sub(digits, 1, 1)
      if #digits > 1 then m = m .. '.' .. sub(digits, 2) end
      local es = e < 0 and '-' or '+'
      local ea = tostring(math.abs(e))
      if #ea < 2 then ea = '0' .. ea end
      return sign .. m .. 'e' .. es .. ea
    end
    if e < 0 then return sign .. '0.' .. string.rep('0', -e - 1) .. digits end
    if #digits <= e + 1 then return sign .. digits .. string.rep('0', e + 1 - #digits) .. '.0' end
    return sign .. sub(digits, 1, e + 1) .. '.' .. sub(digits, e + 2)
  end

  -- Would cur (stored text or false) + amt (text) be a valid increment? Returns true or a reason.
  incr_check = function(cur, amt)
    if not cur then cur = '0' end
    local ck = numkind(cur)
    if not ck then return 'stored value ' .. sub(cur, 1, 60) .. ' is not a JSON number' end
    local ak = numkind(amt)
    if ck == 'int' and not in_int64(cur) then return cur .. ' is out of the 64-bit range' end
    if ck == 'float' and not finite(tonumber(cur)) then return cur .. ' is not finite' end
    if ck == 'int' and ak == 'int' then
      if not in_int64(amt) or not sum_fits(cur, amt) then
        return 'the increment would overflow a 64-bit integer'
      end
      return true
    end
    if not finite(tonumber(cur) + tonumber(amt)) then return 'the increment gives a non-finite number' end
    return true
  end
  proved_safe = function(cur, amt) return incr_check(cur, amt) == true end

  -- Apply the increment; cur is the value pass 1 read (nil: read and check it here).
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
      -- incr_check proved the sum fits: INCRBY computes it exactly.
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
