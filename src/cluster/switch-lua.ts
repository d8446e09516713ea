// The store's side of a router's one-switch-at-a-time across replicas: one key per node,
// `switch:<node>`, holding the claim of the replica whose switch is under way (a hash: holder id,
// replica, model, action, by, loaded, victim), set with a TTL of lease_ttl and renewed by its
// holder while the switch lasts, so a dead replica's claim is gone within lease_ttl. Each step is
// one script (atomic on the server) and announces the change on the gate's channel.

/** The fields of a claim as the store keeps them. */
export interface SwitchClaimFields {
  readonly holder: string;
  readonly replica: string;
  readonly model: string;
  readonly action: 'load' | 'unload';
  readonly by: 'request' | 'reconciler' | 'admin';
  readonly loaded: boolean;
  readonly victim: string | undefined;
}

const FIELDS = ['holder', 'replica', 'model', 'action', 'by', 'loaded', 'victim'] as const;

/** Pure: the script arguments of a claim (after holder id and ttl). */
export function claimArgs(claim: SwitchClaimFields): string[] {
  return [claim.replica, claim.model, claim.action, claim.by, claim.loaded ? '1' : '0', claim.victim ?? ''];
}

/** Pure: the claim an HMGET of FIELDS read, or undefined when there is none (or it is not one). */
export function claimOf(values: readonly unknown[]): SwitchClaimFields | undefined {
  const [holder, replica, model, action, by, loaded, victim] = values.map((v) => (typeof v === 'string' ? v : undefined));
  if (holder === undefined || replica === undefined || model === undefined) return undefined;
  if (action !== 'load' && action !== 'unload') return undefined;
  if (by !== 'request' && by !== 'reconciler' && by !== 'admin') return undefined;
  return { holder, replica, model, action, by, loaded: loaded === '1', victim: victim === undefined || victim === '' ? undefined : victim };
}

const WRITE = `redis.call('HSET', KEYS[1], 'holder', ARGV[1], 'replica', ARGV[3], 'model', ARGV[4], 'action', ARGV[5], 'by', ARGV[6], 'loaded', ARGV[7], 'victim', ARGV[8])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))`;

const READ = `redis.call('HMGET', KEYS[1], '${FIELDS.join("', '")}')`;

/**
 * KEYS: switch key. ARGV: holder id, ttl ms, replica, model, action, by, loaded, victim, channel.
 * Takes the node's claim when free, or updates (and renews) this holder's own; answers {1} taken,
 * or {0, the holder's fields...} when another holds it.
 */
export const SWITCH_TAKE = `local holder = redis.call('HGET', KEYS[1], 'holder')
if holder and holder ~= ARGV[1] then
  local current = ${READ}
  return {0, unpack(current)}
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

/** KEYS: switch key. ARGV: holder id, channel. Gives the claim up, only if still this holder's, and announces it. */
export const SWITCH_RELEASE = `if redis.call('HGET', KEYS[1], 'holder') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
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
