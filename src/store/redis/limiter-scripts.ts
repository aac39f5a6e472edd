/**
 * The Lua scripts of the Redis limiter: each decision is one script, so it is atomic on the Redis server and
 * exact across instances. Keys of one API key share a hash tag ({gk:<id>}), so a script touches one slot.
 *
 * Per key: `s` (hash: quota used and its period, reserved totals, slot count, the RPM/RPD buckets), `l` (sorted
 * set: lease id -> expiry in Redis time, ms), `r` (hash: lease id -> "tokens cost slot"). A lease holds a
 * request's reservation and concurrency slot; its holder renews it while the request runs, and an expired lease
 * (its instance died) is given back by the next script that meets the key.
 */

/** Shared by every script: Redis's clock, and giving back what expired leases held. */
const PURGE = `
local t = redis.call('TIME')
local now_redis = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now_redis)
for _, id in ipairs(expired) do
  local held = redis.call('HGET', KEYS[3], id)
  if held then
    local rt, rc, rs = string.match(held, '(%S+) (%S+) (%S+)')
    redis.call('HINCRBYFLOAT', KEYS[1], 'res_t', 0 - tonumber(rt))
    redis.call('HINCRBYFLOAT', KEYS[1], 'res_c', 0 - tonumber(rc))
    redis.call('HINCRBY', KEYS[1], 'slots', 0 - tonumber(rs))
    redis.call('HDEL', KEYS[3], id)
  end
  redis.call('ZREM', KEYS[2], id)
end
`;

/**
 * ARGV: now, rpm, rpd, concurrency, quota tokens, balance (-1 = none), recorded tokens, recorded spent,
 * recorded period ('n' = never reset), reserve tokens, reserve cost, want slot (0/1), want quota (0/1),
 * lease id, lease ms, state ttl ms.
 * Returns: { ok, code, retry ms, retryable, budget limit (-1 = none), remaining, reset ms }, numbers as strings.
 */
export const ADMIT = `${PURGE}
local now = tonumber(ARGV[1])
local rpm, rpd, conc = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local quota_t, balance = tonumber(ARGV[5]), tonumber(ARGV[6])
local want_slot, want_quota = ARGV[12] == '1', ARGV[13] == '1'
local s = KEYS[1]

-- The record lags behind settlements not yet written: only a new period (a usage reset) replaces the totals.
if redis.call('HGET', s, 'period') ~= ARGV[9] then
  redis.call('HSET', s, 'used_t', ARGV[7], 'used_c', ARGV[8], 'period', ARGV[9])
end

local function bucket(name, cap, window)
  if cap < 0 then
    redis.call('HDEL', s, name .. '_tok', name .. '_at', name .. '_cap')
    return nil
  end
  local old = tonumber(redis.call('HGET', s, name .. '_cap') or '-1')
  local tok, at
  if old < 0 then
    tok, at = cap, now
  else
    tok = tonumber(redis.call('HGET', s, name .. '_tok'))
    at = tonumber(redis.call('HGET', s, name .. '_at'))
    if now > at and old > 0 then tok = math.min(old, tok + (now - at) * old / window) end
    if now > at then at = now end
    if cap ~= old then tok = cap - (old - tok) end
  end
  return { name = name, cap = cap, window = window, tok = tok, at = at }
end

local brpm = bucket('rpm', rpm, 60000)
local brpd = bucket('rpd', rpd, 86400000)
local header = brpm or brpd

local function budget()
  if not header then return { '-1', '0', '0' } end
  local reset = header.window
  if header.cap > 0 then reset = math.ceil((header.cap - header.tok) * header.window / header.cap) end
  return { tostring(header.cap), tostring(math.max(0, math.floor(header.tok))), tostring(reset) }
end

local function save(b)
  if b then redis.call('HSET', s, b.name .. '_tok', tostring(b.tok), b.name .. '_at', tostring(b.at), b.name .. '_cap', tostring(b.cap)) end
end

local function refuse(code, retry, retryable)
  save(brpm)
  save(brpd)
  local bud = budget()
  return { '0', code, tostring(retry), retryable and '1' or '0', bud[1], bud[2], bud[3] }
end

local function wait_for(b)
  if not (b.cap > 0) then return b.window end
  return math.ceil((1 - b.tok) * b.window / b.cap)
end

-- The spec's order: quota, RPM, RPD, concurrency. Everything is decided before anything is consumed.
if want_quota then
  local used_t = tonumber(redis.call('HGET', s, 'used_t') or '0')
  local used_c = tonumber(redis.call('HGET', s, 'used_c') or '0')
  local res_t = tonumber(redis.call('HGET', s, 'res_t') or '0')
  local res_c = tonumber(redis.call('HGET', s, 'res_c') or '0')
  if quota_t >= 0 and quota_t - used_t - res_t <= 0 then return refuse('quota_exceeded', 0, true) end
  if balance >= 0 and balance - used_c - res_c <= 0 then return refuse('quota_exceeded', 0, true) end
end
if brpm and not (brpm.cap > 0) then return refuse('rate_limit_rpm', 3600000, false) end
if brpm and brpm.tok < 1 then return refuse('rate_limit_rpm', wait_for(brpm), true) end
if brpd and not (brpd.cap > 0) then return refuse('rate_limit_rpd', 3600000, false) end
if brpd and brpd.tok < 1 then return refuse('rate_limit_rpd', wait_for(brpd), true) end
-- Every request that may count against a concurrency limit holds a slot, limit or not: a limit set or lowered
-- while requests run then counts them, and never admits more than it allows.
local slot = want_slot
if slot and conc >= 0 and not (conc > 0) then return refuse('concurrent_limit', 3600000, false) end
if slot and conc >= 0 and tonumber(redis.call('HGET', s, 'slots') or '0') >= conc then return refuse('concurrent_limit', 1000, true) end

if brpm then brpm.tok = brpm.tok - 1 end
if brpd then brpd.tok = brpd.tok - 1 end
save(brpm)
save(brpd)
local res_t = want_quota and tonumber(ARGV[10]) or 0
local res_c = want_quota and tonumber(ARGV[11]) or 0
if slot or res_t > 0 or res_c > 0 then
  redis.call('HINCRBYFLOAT', s, 'res_t', res_t)
  redis.call('HINCRBYFLOAT', s, 'res_c', res_c)
  if slot then redis.call('HINCRBY', s, 'slots', 1) end
  redis.call('ZADD', KEYS[2], now_redis + tonumber(ARGV[15]), ARGV[14])
  redis.call('HSET', KEYS[3], ARGV[14], tostring(res_t) .. ' ' .. tostring(res_c) .. ' ' .. (slot and '1' or '0'))
end
local ttl = tonumber(ARGV[16])
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ttl) end
local bud = budget()
return { '1', slot and 'slot' or '', '0', '1', bud[1], bud[2], bud[3] }
`;

/** ARGV: lease id ('' = none), used tokens, used cost. Gives back the lease, adds the real use. */
export const SETTLE = `${PURGE}
if ARGV[1] ~= '' then
  local held = redis.call('HGET', KEYS[3], ARGV[1])
  if held then
    local rt, rc, rs = string.match(held, '(%S+) (%S+) (%S+)')
    redis.call('HINCRBYFLOAT', KEYS[1], 'res_t', 0 - tonumber(rt))
    redis.call('HINCRBYFLOAT', KEYS[1], 'res_c', 0 - tonumber(rc))
    redis.call('HINCRBY', KEYS[1], 'slots', 0 - tonumber(rs))
    redis.call('HDEL', KEYS[3], ARGV[1])
    redis.call('ZREM', KEYS[2], ARGV[1])
  end
end
if tonumber(ARGV[2]) ~= 0 then redis.call('HINCRBYFLOAT', KEYS[1], 'used_t', ARGV[2]) end
if tonumber(ARGV[3]) ~= 0 then redis.call('HINCRBYFLOAT', KEYS[1], 'used_c', ARGV[3]) end
return 1
`;

/** ARGV: lease ms, then lease ids. Pushes the expiry of this instance's running leases of one key forward. */
export const RENEW = `
local t = redis.call('TIME')
local now_redis = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 2, #ARGV do redis.call('ZADD', KEYS[2], 'XX', now_redis + tonumber(ARGV[1]), ARGV[i]) end
return 1
`;

/** Drops a deleted key's state when no instance holds a lease on it any more. */
export const FORGET = `${PURGE}
if redis.call('ZCARD', KEYS[2]) == 0 then redis.call('DEL', KEYS[1], KEYS[2], KEYS[3]) return 1 end
return 0
`;

/**
 * The registry of running instances (fail-open shares a limit by their number). KEYS: the registry. ARGV:
 * instance id, lease ms, 1 = register / 0 = leave. Returns how many instances are registered.
 */
export const INSTANCES = `
local t = redis.call('TIME')
local now_redis = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[3] == '1' then
  redis.call('ZADD', KEYS[1], now_redis + tonumber(ARGV[2]), ARGV[1])
else
  redis.call('ZREM', KEYS[1], ARGV[1])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_redis)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return redis.call('ZCARD', KEYS[1])
`;
