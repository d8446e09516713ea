// The store's Lua scripts for tenant limits shared across replicas: check-and-reserve and settle
// each run as one script (atomic on the server), on the server's own time (TIME).
//
// Keys of one tenant (one hash slot): `meter` (hash: ru/ra = the request bucket's used and when,
// tu/ta = the token bucket's; expires 2 minutes after its last write: an idle bucket is empty),
// `inflight` (sorted set: member = ticket id, score = expiry ms, renewed while the request runs:
// a dead replica's requests leave within lease_ttl), `day:<YYYY-MM-DD>` (the UTC day's tokens,
// used plus reserved; expires an hour after the day ends). A limit of -1 is no limit.

const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/** A bucket of `limit` per minute drains continuously, as the ledger's (tenants/limits.ts). */
const DRAINED = `local function drained(used, at, limit)
  if limit < 0 then return 0 end
  local u = (tonumber(used) or 0) - math.max(0, now - (tonumber(at) or now)) * limit / 60000
  if u < 0 then return 0 end
  return u
end`;

/**
 * KEYS: meter, inflight, day. ARGV: ticket id, max_concurrent, rpm, tpm, tpd, cost, ttl ms,
 * day ttl ms, force (1 = reserved whatever the limits). Answers {admitted 0/1, in flight, requests
 * used, tokens used, today's tokens}, the figures before this request (as strings: Lua floats).
 */
export const TENANT_ADMIT = `${NOW}
${DRAINED}
local mc, rpm, tpm, tpd = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local cost, ttl = tonumber(ARGV[6]), tonumber(ARGV[7])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local inflight = redis.call('ZCARD', KEYS[2])
local m = redis.call('HMGET', KEYS[1], 'ru', 'ra', 'tu', 'ta')
local ru = drained(m[1], m[2], rpm)
local tu = drained(m[3], m[4], tpm)
local day = tonumber(redis.call('GET', KEYS[3]) or '0')
local ok = 1
if ARGV[9] ~= '1' then
  if mc >= 0 and inflight >= mc then ok = 0
  elseif rpm >= 0 and ru + 1 > rpm then ok = 0
  elseif tpm >= 0 and tu + cost > tpm then ok = 0
  elseif tpd >= 0 and day + cost > tpd then ok = 0 end
end
if ok == 1 then
  redis.call('ZADD', KEYS[2], now + ttl, ARGV[1])
  redis.call('PEXPIRE', KEYS[2], ttl * 3)
  redis.call('HSET', KEYS[1], 'ru', tostring(ru + 1), 'ra', now, 'tu', tostring(tu + cost), 'ta', now)
  redis.call('PEXPIRE', KEYS[1], 120000)
  redis.call('INCRBY', KEYS[3], cost)
  redis.call('PEXPIRE', KEYS[3], tonumber(ARGV[8]))
end
return {ok, inflight, tostring(ru), tostring(tu), tostring(day)}`;

/**
 * KEYS: meter, inflight, the admission's day, today. ARGV: ticket id, tpm, reserved, used, today's
 * ttl ms. The request leaves the in-flight set; the token bucket is charged the difference between
 * used and reserved; the reservation leaves its day and the tokens used count today.
 */
export const TENANT_SETTLE = `${NOW}
${DRAINED}
redis.call('ZREM', KEYS[2], ARGV[1])
local tpm, reserved, used = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local diff = used - reserved
if diff ~= 0 and redis.call('EXISTS', KEYS[1]) == 1 then
  local m = redis.call('HMGET', KEYS[1], 'tu', 'ta')
  redis.call('HSET', KEYS[1], 'tu', tostring(math.max(0, drained(m[1], m[2], tpm) + diff)), 'ta', now)
  redis.call('PEXPIRE', KEYS[1], 120000)
end
if redis.call('EXISTS', KEYS[3]) == 1 and redis.call('DECRBY', KEYS[3], reserved) < 0 then redis.call('SET', KEYS[3], 0, 'KEEPTTL') end
if used > 0 then
  redis.call('INCRBY', KEYS[4], used)
  redis.call('PEXPIRE', KEYS[4], tonumber(ARGV[5]))
end
return 1`;

/** KEYS: inflight. ARGV: ttl ms, ticket ids. Renews (re-registers) the requests of this replica still running. */
export const TENANT_RENEW = `${NOW}
local ttl = tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], now + ttl, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], ttl * 3)
return 1`;

export interface TenantKeys {
  readonly meter: string;
  readonly inflight: string;
  day(day: string): string;
}

export function tenantKeys(prefix: string, tenant: string): TenantKeys {
  const base = `${prefix}tenant{${tenant}}`;
  return { meter: `${base}:meter`, inflight: `${base}:inflight`, day: (day) => `${base}:day:${day}` };
}
