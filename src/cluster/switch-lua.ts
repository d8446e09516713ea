// The store's side of a router's one-switch-at-a-time across replicas: one key per node,
// `switch:<node>`, holding the claim of the replica whose switch is under way (a hash: holder id,
// replica, model, action, by, loaded, victim), set with a TTL of lease_ttl and renewed by its
// holder while the switch lasts, so a dead replica's claim is gone within lease_ttl. Each step is
// one script (atomic on the server) and announces the change on the gate's channel. A claim is
// only taken while no other replica holds a lease on the model it unloads (a load's victim, an
// unload's model: in use nowhere), and a release leaves the switch's record behind (`settled`, no holder) for
// SETTLED_TTL_MS: what the router runs now, for replicas whose listing has not caught up yet (the
// slot lease script refuses a request that would make the router load a model: lua.ts ACQUIRE).

/** The fields of a claim as the store keeps them. */
export interface SwitchClaimFields {
  readonly holder: string;
  readonly replica: string;
  readonly model: string;
  readonly action: 'load' | 'unload';
  readonly by: 'request' | 'reconciler' | 'admin';
  readonly loaded: boolean;
  readonly victim: string | undefined;
  /** Released: no one holds the node, this is the record of its last switch (holder: the one that released it). */
  readonly settled?: true;
}

/** Why a claim was not taken: another holds the node, or other replicas use the victim it would unload. */
export type SwitchRefusal =
  | { readonly kind: 'held'; readonly claim: SwitchClaimFields }
  | { readonly kind: 'victim_busy'; readonly victim: string; readonly replicas: readonly string[] };

const FIELDS = ['holder', 'replica', 'model', 'action', 'by', 'loaded', 'victim', 'settled'] as const;

/** How long a released switch's record is kept: the bound on a listing catching up with it (router-switches' LISTING_CATCH_UP_MS). */
export const SETTLED_TTL_MS = 30_000;

/** Pure: the script arguments of a claim (after holder id and ttl). */
export function claimArgs(claim: SwitchClaimFields): string[] {
  return [claim.replica, claim.model, claim.action, claim.by, claim.loaded ? '1' : '0', claim.victim ?? ''];
}

/** Pure: the claim (or a released switch's record) an HMGET of FIELDS read, or undefined when there is none (or it is not one). */
export function claimOf(values: readonly unknown[]): SwitchClaimFields | undefined {
  const [holder, replica, model, action, by, loaded, victim, settled] = values.map((v) =>
    typeof v === 'string' ? v : undefined,
  );
  // A released switch's record keeps the id of the holder that released it in `settled`.
  const released = holder === undefined && settled !== undefined && settled !== '';
  const id = holder ?? settled;
  if (id === undefined || (holder === undefined && !released) || replica === undefined || model === undefined) return undefined;
  if (action !== 'load' && action !== 'unload') return undefined;
  if (by !== 'request' && by !== 'reconciler' && by !== 'admin') return undefined;
  const claim: SwitchClaimFields = {
    holder: id,
    replica,
    model,
    action,
    by,
    loaded: loaded === '1',
    victim: victim === undefined || victim === '' ? undefined : victim,
  };
  return released ? { ...claim, settled: true } : claim;
}

/** Pure: the replicas named by lease ids (`replica/run/seq`), each once. */
export function replicasOfLeases(ids: readonly unknown[]): string[] {
  const names = ids.flatMap((id) =>
    typeof id === 'string' && id.split('/').length >= 3 ? [id.split('/').slice(0, -2).join('/')] : [],
  );
  return [...new Set(names)];
}

const WRITE = `redis.call('HDEL', KEYS[1], 'settled')
redis.call('HSET', KEYS[1], 'holder', ARGV[1], 'replica', ARGV[3], 'model', ARGV[4], 'action', ARGV[5], 'by', ARGV[6], 'loaded', ARGV[7], 'victim', ARGV[8])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))`;

const READ = `redis.call('HMGET', KEYS[1], '${FIELDS.join("', '")}')`;

/**
 * KEYS: switch key, the leases of the model it unloads (a load's victim, an unload's model; the
 * switch key again when none). ARGV:
 * holder id, ttl ms, replica, model, action, by, loaded, victim, channel. Takes the node's claim
 * when free (a released switch's record is replaced), or updates (and renews) this holder's own;
 * answers {1} taken, {0, the holder's fields...} when another holds it, or {2, lease ids...} when
 * other replicas hold leases on the victim (it is in use there: not unloaded).
 */
export const SWITCH_TAKE = `local holder = redis.call('HGET', KEYS[1], 'holder')
if holder and holder ~= ARGV[1] then
  local current = ${READ}
  return {0, unpack(current)}
end
if not holder and KEYS[2] ~= KEYS[1] then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local using = {}
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], now, '+inf')) do
    if string.sub(id, 1, #ARGV[3] + 1) ~= ARGV[3] .. '/' then using[#using + 1] = id end
  end
  if #using > 0 then return {2, unpack(using)} end
end
${WRITE}
redis.call('PUBLISH', ARGV[9], KEYS[1])
return {1}`;

/**
 * KEYS: switch key. ARGV as SWITCH_TAKE (without channel). Renews this holder's claim; one the
 * store lost (restarted, expired in a pause) is registered again if no one took it meanwhile.
 * Answers 1 still held, 0 another holds it now.
 */
export const SWITCH_RENEW = `local holder = redis.call('HGET', KEYS[1], 'holder')
if holder and holder ~= ARGV[1] then return 0 end
${WRITE}
return 1`;

/**
 * KEYS: switch key. ARGV: holder id, channel, settled ttl ms. Gives the claim up, only if still this
 * holder's, keeping the switch's record (no holder) for the settled ttl, and announces it.
 */
export const SWITCH_RELEASE = `if redis.call('HGET', KEYS[1], 'holder') ~= ARGV[1] then return 0 end
redis.call('HDEL', KEYS[1], 'holder')
redis.call('HSET', KEYS[1], 'settled', ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
redis.call('PUBLISH', ARGV[2], KEYS[1])
return 1`;

/** The fields to read a claim with (HMGET). */
export const CLAIM_FIELDS: readonly string[] = FIELDS;

export function switchKey(prefix: string, node: string): string {
  return `${prefix}switch:${node}`;
}

/** The node of a switch key as the scripts announce it; undefined if not one of ours. */
export function nodeOfSwitchKey(prefix: string, key: string): string | undefined {
  const head = `${prefix}switch:`;
  return key.startsWith(head) && key.length > head.length ? key.slice(head.length) : undefined;
}
