/**
 * The Lua scripts of the pool's shared state in Redis (pool-state.ts). Each decision that must not race between
 * instances is one script: a deadline that only extends, the window's count and its trimming, an instance's
 * in-flight counts and the sum over the live instances. Every key starts with `{gantry}:pool:` (one hash tag: one
 * slot of a Redis Cluster, so a script may reach the per-instance hashes it finds in the registry).
 *
 * Layout (NAME is an account name, ID an instance id):
 *   {gantry}:pool:a:NAME     hash: until (ms), m:MODEL (ms), reason, disabled (reason), manual (1/0)
 *   {gantry}:pool:p:NAME     the probe claim: a string with a TTL (SET NX PX)
 *   {gantry}:pool:w:NAME     hash: rSECOND / fSECOND, requests and failures per second of the rolling window
 *   {gantry}:pool:i:ID       hash: NAME → streams this instance runs on the account now (expires with the lease)
 *   {gantry}:pool:instances  sorted set: ID scored by its lease's expiry (Redis time, ms)
 */

export const PREFIX = "{gantry}:pool:";
export const INSTANCES_KEY = `${PREFIX}instances`;

/** Sums one account's in-flight count over the live instances (those in the registry whose lease has not passed). */
const SUM_IN_FLIGHT = `
local function live_instances()
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('ZREMRANGEBYSCORE', '${INSTANCES_KEY}', '-inf', now)
  return redis.call('ZRANGE', '${INSTANCES_KEY}', 0, -1), now
end
local function in_flight(ids, name)
  local n = 0
  for _, id in ipairs(ids) do n = n + tonumber(redis.call('HGET', '${PREFIX}i:' .. id, name) or '0') end
  return n
end
`;

/**
 * ARGV: now (ms, the caller's clock, the one its deadlines were set with), names…
 * Returns per name: until, reason, disabled, manual, probing, in flight, model count, then model/until pairs.
 * Deadlines already passed are left out (not deleted: the key's own expiry removes them).
 */
export const READ = `${SUM_IN_FLIGHT}
local now = tonumber(ARGV[1])
local ids = live_instances()
local out = {}
for i = 2, #ARGV do
  local name = ARGV[i]
  local h = redis.call('HGETALL', '${PREFIX}a:' .. name)
  local untilMs, reason, disabled, manual = '', '', '', '0'
  local models = {}
  for j = 1, #h, 2 do
    local f, v = h[j], h[j + 1]
    if f == 'until' then
      if tonumber(v) > now then untilMs = v end
    elseif f == 'reason' then reason = v
    elseif f == 'disabled' then disabled = v
    elseif f == 'manual' then manual = v
    elseif string.sub(f, 1, 2) == 'm:' and tonumber(v) > now then
      models[#models + 1] = string.sub(f, 3)
      models[#models + 1] = v
    end
  end
  local probing = redis.call('EXISTS', '${PREFIX}p:' .. name)
  out[#out + 1] = untilMs
  out[#out + 1] = reason
  out[#out + 1] = disabled
  out[#out + 1] = manual
  out[#out + 1] = tostring(probing)
  out[#out + 1] = tostring(in_flight(ids, name))
  out[#out + 1] = tostring(#models / 2)
  for _, v in ipairs(models) do out[#out + 1] = v end
end
return out
`;

/**
 * KEYS: the account's hash. ARGV: field ('until' or 'm:MODEL'), until (ms), reason, now (ms).
 * The deadline only extends. The hash expires a day after its latest deadline, unless the account is disabled
 * (then it stays until enabled).
 */
export const COOL = `
local untilMs = tonumber(ARGV[2])
local current = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if untilMs > current then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
redis.call('HSET', KEYS[1], 'reason', ARGV[3])
if redis.call('HEXISTS', KEYS[1], 'disabled') == 0 then
  local ttl = math.max(untilMs, current) - tonumber(ARGV[4]) + 86400000
  local left = redis.call('PTTL', KEYS[1])
  if left < 0 or ttl > left then redis.call('PEXPIRE', KEYS[1], math.max(ttl, 1000)) end
end
return 1
`;

/** KEYS: the account's hash. ARGV: reason, manual (1/0). An operator's disabling stays manual until enabled. */
export const DISABLE = `
local manual = ARGV[2]
if redis.call('HGET', KEYS[1], 'manual') == '1' then manual = '1' end
redis.call('HSET', KEYS[1], 'disabled', ARGV[1], 'manual', manual, 'reason', ARGV[1])
redis.call('PERSIST', KEYS[1])
return 1
`;

/**
 * KEYS: the account's window hash. ARGV: second, oldest second kept out (≤ it is dropped), failed (1/0), TTL (ms).
 * Returns { failures, requests } within the window.
 */
export const OUTCOME = `
redis.call('HINCRBY', KEYS[1], 'r' .. ARGV[1], 1)
if ARGV[3] == '1' then redis.call('HINCRBY', KEYS[1], 'f' .. ARGV[1], 1) end
local oldest = tonumber(ARGV[2])
local h = redis.call('HGETALL', KEYS[1])
local requests, failures = 0, 0
for j = 1, #h, 2 do
  local f = h[j]
  local second = tonumber(string.sub(f, 2))
  if second <= oldest then
    redis.call('HDEL', KEYS[1], f)
  elseif string.sub(f, 1, 1) == 'r' then
    requests = requests + tonumber(h[j + 1])
  else
    failures = failures + tonumber(h[j + 1])
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return { failures, requests }
`;

/**
 * KEYS: this instance's in-flight hash. ARGV: instance id, lease (ms), n, then n account names whose totals are
 * wanted, then account/count pairs (counts > 0): this instance's whole map. Rewrites the hash with the map (so a
 * count back at 0 leaves it), registers the instance for a lease, and returns the n accounts' counts over every live
 * instance. One call carries every change since the last one: streams that start and end while it runs are written
 * with the next.
 */
export const FLUSH_IN_FLIGHT = `${SUM_IN_FLIGHT}
local ids, now = live_instances()
redis.call('ZADD', '${INSTANCES_KEY}', now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', '${INSTANCES_KEY}', tonumber(ARGV[2]) * 2)
local n = tonumber(ARGV[3])
redis.call('DEL', KEYS[1])
for i = 4 + n, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
if #ARGV >= 4 + n then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
local found = false
for _, id in ipairs(ids) do if id == ARGV[1] then found = true end end
if not found then ids[#ids + 1] = ARGV[1] end
local out = {}
for i = 1, n do out[i] = in_flight(ids, ARGV[3 + i]) end
return out
`;

/**
 * KEYS: this instance's in-flight hash. ARGV: instance id, lease (ms), then account/count pairs (counts > 0).
 * Rewrites the whole hash and renews the registration: run while the instance has streams running, it also puts
 * them back after a Redis that restarted empty.
 */
export const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('DEL', KEYS[1])
for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
if #ARGV >= 3 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
redis.call('ZADD', '${INSTANCES_KEY}', now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', '${INSTANCES_KEY}', tonumber(ARGV[2]) * 2)
return 1
`;

/** KEYS: this instance's in-flight hash. ARGV: instance id. Leaves the registry (a clean stop). */
export const LEAVE = `
redis.call('DEL', KEYS[1])
redis.call('ZREM', '${INSTANCES_KEY}', ARGV[1])
return 1
`;
