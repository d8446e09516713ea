// The store's Lua scripts for tenant limits shared across replicas: check-and-reserve and settle
// each run as one script (atomic on the server), on the server's own time (TIME).
//
// Keys of one tenant (one hash slot): `meter` (hash: ru/ra = the request bucket's used and when,
// tu/ta = the token bucket's; expires 2 minutes after its last write: an idle bucket is empty),
// `inflight` (sorted set: member = ticket id, score = expiry ms, renewed while the request runs:
// a dead replica's requests leave within lease_ttl), `open` (hash: ticket id = "tokens
// reserved:day taken", until settled, so a settle sent twice or after a lost reply applies once;
// kept 25 h past the tenant's last admission: a dead replica's open tickets stay that long),
// `day:<YYYY-MM-DD>` (the UTC day's tokens, used plus reserved; expires an hour after the day
// ends), `rejoin:<batch id>` (a fallback batch applied: 25 h). A limit of -1 is no limit.
//
// The day is the store's: the replica names three candidate day keys (KEYS, so every key is
// known up front) and the middle one's start; the script picks by TIME (tenants/store-day.ts).

const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/** Which of three candidate days (1..3) the store's clock is in, its key's index and ttl. */
const DAY_OF = `local function dayof(start, grace)
  local i = 2
  if now < start then i = 1 elseif now >= start + 86400000 then i = 3 end
  return i, math.max(1, start + (i - 1) * 86400000 - now + grace)
end`;

/** A bucket of `limit` per minute drains continuously, as the ledger's (tenants/limits.ts). */
const DRAINED = `local function drained(used, at, limit)
  if limit < 0 then return 0 end
  local u = (tonumber(used) or 0) - math.max(0, now - (tonumber(at) or now)) * limit / 60000
  if u < 0 then return 0 end
  return u
end`;

/**
 * KEYS: meter, inflight, open, the three candidate days. ARGV: ticket id, max_concurrent, rpm,
 * tpm, tpd, cost, ttl ms, grace ms (a day's key is kept that long past its end), force (1 =
 * reserved whatever the limits), the middle candidate's start ms. Answers {admitted 0/1, in
 * flight, requests used, tokens used, today's tokens, the day taken (1..3), the store's ms}, the
 * figures before this request (as strings: Lua floats).
 */
export const TENANT_ADMIT = `${NOW}
${DRAINED}
${DAY_OF}
local mc, rpm, tpm, tpd = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local cost, ttl = tonumber(ARGV[6]), tonumber(ARGV[7])
local di, dttl = dayof(tonumber(ARGV[10]), tonumber(ARGV[8]))
local dkey = KEYS[3 + di]
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local inflight = redis.call('ZCARD', KEYS[2])
local m = redis.call('HMGET', KEYS[1], 'ru', 'ra', 'tu', 'ta')
local ru = drained(m[1], m[2], rpm)
local tu = drained(m[3], m[4], tpm)
local day = tonumber(redis.call('GET', dkey) or '0')
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
  redis.call('HSET', KEYS[3], ARGV[1], cost .. ':' .. di)
  redis.call('PEXPIRE', KEYS[3], 90000000)
  redis.call('HSET', KEYS[1], 'ru', tostring(ru + 1), 'ra', now, 'tu', tostring(tu + cost), 'ta', now)
  redis.call('PEXPIRE', KEYS[1], 120000)
  redis.call('INCRBY', dkey, cost)
  redis.call('PEXPIRE', dkey, dttl)
end
return {ok, inflight, tostring(ru), tostring(tu), tostring(day), di, now}`;

/**
 * KEYS: meter, inflight, open, the three candidate days of its admission, the three of its end.
 * ARGV: ticket id, tpm, used, grace ms, the middle end candidate's start ms. The request leaves
 * the in-flight set; the token bucket is charged the difference between used and reserved; the
 * reservation leaves the day it was counted in and the tokens used count on the store's day.
 * Once per ticket: a ticket not open (settled already, a reply lost; or never reserved: a cancel
 * of a reserve whose answer was lost) changes nothing. Answers 1 applied, 0 not.
 */
export const TENANT_SETTLE = `${NOW}
${DRAINED}
${DAY_OF}
redis.call('ZREM', KEYS[2], ARGV[1])
local held = redis.call('HGET', KEYS[3], ARGV[1])
if not held then return 0 end
redis.call('HDEL', KEYS[3], ARGV[1])
local sep = string.find(held, ':', 1, true)
local reserved, ai = tonumber(string.sub(held, 1, sep - 1)), tonumber(string.sub(held, sep + 1))
local tpm, used = tonumber(ARGV[2]), tonumber(ARGV[3])
local diff = used - reserved
if diff ~= 0 and redis.call('EXISTS', KEYS[1]) == 1 then
  local m = redis.call('HMGET', KEYS[1], 'tu', 'ta')
  redis.call('HSET', KEYS[1], 'tu', tostring(math.max(0, drained(m[1], m[2], tpm) + diff)), 'ta', now)
  redis.call('PEXPIRE', KEYS[1], 120000)
end
local akey = KEYS[3 + ai]
if redis.call('EXISTS', akey) == 1 and redis.call('DECRBY', akey, reserved) < 0 then redis.call('SET', akey, 0, 'KEEPTTL') end
if used > 0 then
  local di, dttl = dayof(tonumber(ARGV[5]), tonumber(ARGV[4]))
  redis.call('INCRBY', KEYS[6 + di], used)
  redis.call('PEXPIRE', KEYS[6 + di], dttl)
end
return 1`;

/**
 * KEYS: meter, the batch's marker, then one key per day of the batch. ARGV: marker ttl ms, rpm,
 * tpm, requests, tokens, the batch's age ms, grace ms, then per day its start ms and tokens.
 * Adds what a replica used in fallback to the shared buckets (drained by the batch's age) and
 * days, once per batch id: a batch whose marker is set already changes nothing (answers 0).
 */
export const TENANT_REJOIN = `${NOW}
${DRAINED}
if not redis.call('SET', KEYS[2], '1', 'NX', 'PX', tonumber(ARGV[1])) then return 0 end
local rpm, tpm, age = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[6])
local function aged(amount, limit)
  if limit < 0 then return 0 end
  return math.max(0, amount - age * limit / 60000)
end
local r, k = aged(tonumber(ARGV[4]), rpm), aged(tonumber(ARGV[5]), tpm)
if r > 0 or k > 0 then
  local m = redis.call('HMGET', KEYS[1], 'ru', 'ra', 'tu', 'ta')
  redis.call('HSET', KEYS[1], 'ru', tostring(drained(m[1], m[2], rpm) + r), 'ra', now, 'tu', tostring(drained(m[3], m[4], tpm) + k), 'ta', now)
  redis.call('PEXPIRE', KEYS[1], 120000)
end
local grace = tonumber(ARGV[7])
for i = 3, #KEYS do
  local start, tokens = tonumber(ARGV[6 + (i - 2) * 2]), tonumber(ARGV[7 + (i - 2) * 2])
  local left = start + 86400000 + grace - now
  if left > 0 and tokens > 0 then
    redis.call('INCRBY', KEYS[i], tokens)
    redis.call('PEXPIRE', KEYS[i], left)
  end
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
  readonly open: string;
  day(day: string): string;
  rejoin(batch: string): string;
}

export function tenantKeys(prefix: string, tenant: string): TenantKeys {
  const base = `${prefix}tenant{${tenant}}`;
  return {
    meter: `${base}:meter`,
    inflight: `${base}:inflight`,
    open: `${base}:open`,
    day: (day) => `${base}:day:${day}`,
    rejoin: (batch) => `${base}:rejoin:${batch}`,
  };
}
