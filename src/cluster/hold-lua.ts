// The store's Lua scripts for the operator's holds ([cluster], nodes/models/operator-holds.ts):
// one key per (node, model), `hold:<JSON [node, model]>`, its value the hold (JSON: node, model,
// kind — `loaded`, `unloaded`, or `released` when the operator ended it — replica, for), its TTL
// the hold's length (PX, the store's clock ends it); and an index set
// `holds` of those keys so a listing reads them in one script. A listing drops from the index the
// keys the store already expired.

/** Holds more than this are not an operator's: a listing longer than it is nonsense. */
export const MAX_HOLDS = 10_000;

/** KEYS: the hold's key, the index. ARGV: value, ttl ms. */
export const HOLD_PUT = `redis.call('SET', KEYS[1], ARGV[1], 'PX', tonumber(ARGV[2]))
redis.call('SADD', KEYS[2], KEYS[1])
return 1`;

/** KEYS: the index. Answers {value, ms left, value, ms left, ...} of the holds in force. */
export const HOLD_LIST = `local keys = redis.call('SMEMBERS', KEYS[1])
local out = {}
for i = 1, #keys do
  local v = redis.call('GET', keys[i])
  local left = redis.call('PTTL', keys[i])
  if v and left > 0 then
    out[#out + 1] = v
    out[#out + 1] = left
  else
    redis.call('SREM', KEYS[1], keys[i])
  end
end
return out`;

export function holdKey(prefix: string, node: string, model: string): string {
  return `${prefix}hold:${JSON.stringify([node, model])}`;
}

export function holdIndexKey(prefix: string): string {
  return `${prefix}holds`;
}
