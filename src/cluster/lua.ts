// The store's Lua scripts: every step that reads and writes more than one key runs as one script,
// so it is atomic on the server. Time is the server's own (TIME), never a replica's clock, so
// replicas whose clocks disagree still agree on when a lease expires.
//
// Keys of one (node, model): `leases` (sorted set: member = replica/lease id, score = expiry ms),
// `queue` (sorted set: member = waiter id, score = ticket, the global arrival order), `waits`
// (sorted set: member = waiter id, score = expiry ms: a dead replica's waiters leave the queue),
// `ticket` (the counter that numbers arrivals). The replicas set holds each live replica's expiry.

const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/** Drops expired leases and waiters of one (node, model). */
const PURGE = `redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local gone = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
for i = 1, #gone do
  redis.call('ZREM', KEYS[2], gone[i])
  redis.call('ZREM', KEYS[3], gone[i])
end`;

/**
 * A limited router's switch guard (KEYS[5] the node's switch key, switch-lua.ts; ARGV[6] replica,
 * ARGV[7] model, ARGV[8] the router's models_max, 0 = not a limited router): a request of a replica
 * other than the switch's would make the router load its model when the model is the switch's
 * victim, the model an unload takes away, or (one model at a time) any other model than the one
 * switched to. Sets `switching`.
 */
const SWITCH_GUARD = `local switching = false
local max = tonumber(ARGV[8]) or 0
if max > 0 then
  local s = redis.call('HMGET', KEYS[5], 'holder', 'replica', 'model', 'action', 'loaded', 'victim')
  if s[3] and s[2] ~= ARGV[6] then
    local m = ARGV[7]
    if s[6] == m or (s[4] == 'unload' and s[3] == m) then switching = true end
    if s[4] == 'load' and s[3] ~= m and max == 1 and (s[1] or s[5] == '1') then switching = true end
  end
end`;

/**
 * KEYS: leases, queue, waits, ticket, switch. ARGV: lease id, waiter id, limit, ttl ms, channel,
 * replica, model, models_max. Grants a lease only under the limit and only to a waiter among the
 * first `free` in the queue (a newcomer stands behind everyone queued). Answers {1, used} granted,
 * {0, used, ahead} queued, or {2, used} refused by the switch guard (the waiter leaves the queue).
 */
export const ACQUIRE = `${NOW}
${PURGE}
${SWITCH_GUARD}
if switching then
  redis.call('ZREM', KEYS[2], ARGV[2])
  redis.call('ZREM', KEYS[3], ARGV[2])
  return {2, redis.call('ZCARD', KEYS[1]), 0}
end
local used = redis.call('ZCARD', KEYS[1])
local free = tonumber(ARGV[3]) - used
local ttl = tonumber(ARGV[4])
local rank = redis.call('ZRANK', KEYS[2], ARGV[2])
local ahead = rank or redis.call('ZCARD', KEYS[2])
if free > 0 and ahead < free then
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ttl * 3)
  if rank then
    redis.call('ZREM', KEYS[2], ARGV[2])
    redis.call('ZREM', KEYS[3], ARGV[2])
    if free > 1 and redis.call('ZCARD', KEYS[2]) > 0 then redis.call('PUBLISH', ARGV[5], KEYS[1]) end
  end
  return {1, used + 1, 0}
end
if not rank then
  redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[4]), ARGV[2])
end
redis.call('ZADD', KEYS[3], now + ttl, ARGV[2])
redis.call('PEXPIRE', KEYS[2], ttl * 3)
redis.call('PEXPIRE', KEYS[3], ttl * 3)
redis.call('PEXPIRE', KEYS[4], ttl * 3)
return {0, used, ahead}`;

/** KEYS: leases. ARGV: lease id, channel. Returns the lease and announces the free slot. */
export const RELEASE = `local removed = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('PUBLISH', ARGV[2], KEYS[1])
return removed`;

/** KEYS: queue, waits, leases. ARGV: waiter id, channel. A waiter gives up; the ones behind it move up. */
export const LEAVE = `local removed = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if removed > 0 then redis.call('PUBLISH', ARGV[2], KEYS[3]) end
return removed`;

/**
 * KEYS: leases, waits. ARGV: ttl ms, n, then n lease ids, then waiter ids. Renews what this replica
 * holds: a lease it still holds is (re-)registered even if it expired meanwhile (the store was
 * paused or restarted), so the count stays what the node really runs; a waiter only if still queued.
 */
export const RENEW = `${NOW}
local ttl = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
for i = 3, 2 + n do redis.call('ZADD', KEYS[1], now + ttl, ARGV[i]) end
for i = 3 + n, #ARGV do redis.call('ZADD', KEYS[2], 'XX', now + ttl, ARGV[i]) end
if n > 0 then redis.call('PEXPIRE', KEYS[1], ttl * 3) end
return n`;

/** KEYS: replicas. ARGV: replica, ttl ms. This replica is alive; answers how many are. */
export const HEARTBEAT = `${NOW}
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 3)
return redis.call('ZCARD', KEYS[1])`;

/** The store keys of one (node, model); names are joined with a separator node and model names cannot hold. */
export interface PairKeys {
  readonly leases: string;
  readonly queue: string;
  readonly waits: string;
  readonly ticket: string;
}

export function pairKeys(prefix: string, node: string, model: string): PairKeys {
  const base = `${prefix}{${node}\u0000${model}}`;
  return { leases: `${base}:leases`, queue: `${base}:queue`, waits: `${base}:waits`, ticket: `${base}:ticket` };
}

/** The (node, model) of a pair's leases key, as the release script announces it; undefined if not one of ours. */
export function pairOfLeasesKey(prefix: string, key: string): { node: string; model: string } | undefined {
  if (!key.startsWith(`${prefix}{`) || !key.endsWith('}:leases')) return undefined;
  const inner = key.slice(prefix.length + 1, -'}:leases'.length);
  const cut = inner.indexOf('\u0000');
  return cut < 0 ? undefined : { node: inner.slice(0, cut), model: inner.slice(cut + 1) };
}

/** KEYS: the lease key. ARGV: holder, ttl ms. Renews the lease of its holder, or takes a free one; 1 = held. */
export const HOLD = `local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
  return 1
end
if holder then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', tonumber(ARGV[2]))
return 1`;

/** KEYS: the lease key. ARGV: holder. Gives the lease up, only if it is still this holder's. */
export const DROP = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1`;
