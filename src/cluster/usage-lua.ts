// The store's Lua scripts for the site's /admin/tenants ([cluster]): each replica's part of the
// tenants' usage, and a read of a limited tenant's shared counters. On the server's own time
// (TIME), so every replica's part is aged by one clock.
//
// Key: `usage` (hash: field = replica name, value = "<published at ms> <JSON part>"). A part is
// kept `keep` ms after it was written (a day: a dead replica's counts of today still count), and
// the publishing replica drops the parts older than that.

const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/** KEYS: usage. ARGV: replica, JSON part, keep ms. */
export const USAGE_PUBLISH = `${NOW}
local keep = tonumber(ARGV[3])
redis.call('HSET', KEYS[1], ARGV[1], now .. ' ' .. ARGV[2])
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local at = tonumber(string.match(all[i + 1], '^(%d+) '))
  if at == nil or at < now - keep then redis.call('HDEL', KEYS[1], all[i]) end
end
redis.call('PEXPIRE', KEYS[1], keep)
return 1`;

/** KEYS: usage. Answers {now ms, {field, value, ...}}. */
export const USAGE_READ = `${NOW}
return {tostring(now), redis.call('HGETALL', KEYS[1])}`;

/**
 * KEYS: meter, inflight, day (tenant-lua.ts's keys of one tenant). Reads without changing:
 * {now, running requests, ru, ra, tu, ta, day's tokens} (absent fields as nil).
 */
export const TENANT_PEEK = `${NOW}
local running = redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf')
local m = redis.call('HMGET', KEYS[1], 'ru', 'ra', 'tu', 'ta')
return {tostring(now), running, m[1], m[2], m[3], m[4], redis.call('GET', KEYS[3])}`;

export function usageKey(prefix: string): string {
  return `${prefix}usage`;
}
