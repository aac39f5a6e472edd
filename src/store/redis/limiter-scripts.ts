/**
 * The Lua scripts of the Redis limiter: each decision is one script, so it is atomic on the Redis server and
 * exact across instances. Keys of one API key share a hash tag ({gk:<id>}), so a script touches one slot.
 *
 * Per key: `s` (hash: quota used and its period, reserved totals, slot count, the RPM/RPD buckets), `l` (sorted
 * set: lease id -> expiry in Redis time, ms), `r` (hash: lease id -> "tokens cost slot"). A lease holds a
 * request's reservation and concurrency slot; its holder renews it while the request runs, and an expired lease
 * (its instance died) is given back by the next script that meets the key.
 *
 * A key's state is complete once it has a `period` field: ADMIT writes it when it builds the state from what the
 * record says (history), so a Redis that came back empty forgets nothing the database knows. Until then
 * (leases registered again, usage settled after the restart) the fields only add to what the record says.
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
 * lease id, lease ms, state ttl ms, then the history for a key with no state: 'ask' (answer { 'history' } and
 * decide nothing) or 'given', its tokens, spent, and requests admitted in the last day.
 * Returns: { ok, code, retry ms, retryable, budget limit (-1 = none), remaining, reset ms }, numbers as strings.
 */
export const ADMIT = `${PURGE}
local now = tonumber(ARGV[1])
local rpm, rpd, conc = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local quota_t, balance = tonumber(ARGV[5]), tonumber(ARGV[6])
local want_slot, want_quota = ARGV[12] == '1', ARGV[13] == '1'
local s = KEYS[1]

-- No state for the key (first use, idle past its expiry, or a Redis that came back empty): built from the
-- record. Usage settled here meanwhile adds to the record's totals; the day's requests are the ledger's rows,
-- the calls running now (their leases) and the calls settled here meanwhile (late_n). Counting one twice is
-- stricter, never looser. RPM buckets start full.
if not redis.call('HGET', s, 'period') then
  if ARGV[17] == 'ask' then return { 'history' } end
  local used_t = tonumber(redis.call('HGET', s, 'used_t') or '0') + tonumber(ARGV[18])
  local used_c = tonumber(redis.call('HGET', s, 'used_c') or '0') + tonumber(ARGV[19])
  redis.call('HSET', s, 'used_t', tostring(used_t), 'used_c', tostring(used_c), 'period', ARGV[9])
  if rpd >= 0 then
    local taken = tonumber(ARGV[20]) + redis.call('HLEN', KEYS[3]) + tonumber(redis.call('HGET', s, 'late_n') or '0')
    redis.call('HSET', s, 'rpd_tok', tostring(math.max(0, rpd - taken)), 'rpd_at', tostring(now), 'rpd_cap', tostring(rpd))
  end
  redis.call('HDEL', s, 'late_n')
end

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

/**
 * ARGV: lease id ('' = none), used tokens, used cost, '1' when the call counts as a settled request. Gives back
 * the lease, adds the real use. A call settled while the key has no complete state is counted (late_n), so the
 * state built from the record, where its ledger row may not be yet, still counts it against the day.
 */
export const SETTLE = `${PURGE}
if ARGV[4] == '1' and not redis.call('HGET', KEYS[1], 'period') then redis.call('HINCRBY', KEYS[1], 'late_n', 1) end
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

/**
 * Registers again the running leases of one key that Redis does not hold (it came back empty): ARGV: lease ms,
 * state ttl ms, then per lease its id, reserved tokens, reserved cost, slot (0/1). Leases it holds are renewed.
 */
export const REREGISTER = `
local t = redis.call('TIME')
local now_redis = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 3, #ARGV, 4 do
  local id = ARGV[i]
  if redis.call('HEXISTS', KEYS[3], id) == 0 then
    redis.call('HSET', KEYS[3], id, ARGV[i + 1] .. ' ' .. ARGV[i + 2] .. ' ' .. ARGV[i + 3])
    redis.call('HINCRBYFLOAT', KEYS[1], 'res_t', ARGV[i + 1])
    redis.call('HINCRBYFLOAT', KEYS[1], 'res_c', ARGV[i + 2])
    redis.call('HINCRBY', KEYS[1], 'slots', tonumber(ARGV[i + 3]))
  end
  redis.call('ZADD', KEYS[2], now_redis + tonumber(ARGV[1]), id)
end
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[2])) end
return 1
`;

/** Drops a deleted key's state when no instance holds a lease on it any more. */
export const FORGET = `${PURGE}
if redis.call('ZCARD', KEYS[2]) == 0 then redis.call('DEL', KEYS[1], KEYS[2], KEYS[3]) return 1 end
return 0
`;

/**
 * The registry of running instances (fail-open shares a limit by their number) and the generation of this
 * Redis's data: a random value set by the first instance that finds none, so a Redis that came back empty has a
 * new one. An instance is registered only under the generation it names (it registers its running leases again
 * first when the generation changed), so being in the registry means its leases are in.
 * KEYS: the registry, the generation. ARGV: instance id, lease ms, 1 = register / 0 = leave, the generation the
 * instance knows, a new generation to set if there is none.
 * Returns: { generation, Redis time (ms), then each registered instance's id and expiry }.
 */
export const INSTANCES = `
local t = redis.call('TIME')
local now_redis = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local gen = redis.call('GET', KEYS[2])
if not gen then
  gen = ARGV[5]
  redis.call('SET', KEYS[2], gen)
end
if ARGV[3] ~= '1' then
  redis.call('ZREM', KEYS[1], ARGV[1])
elseif ARGV[4] == gen then
  redis.call('ZADD', KEYS[1], now_redis + tonumber(ARGV[2]), ARGV[1])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_redis)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
local out = { gen, tostring(now_redis) }
for _, v in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')) do out[#out + 1] = v end
return out
`;
