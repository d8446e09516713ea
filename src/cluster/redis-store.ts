// The cluster store over Redis/Valkey (iovalkey: bench/store-clients.ts measured the three clients).
// Loaded only by a dynamic import when [cluster] is configured. Two connections: commands, and a
// subscriber for the free-slot announcements. Commands fail at once while disconnected (no offline
// queue) and time out after `callTimeoutMs`; the client reconnects by itself in the background.

import { Redis } from 'iovalkey';
import { ACQUIRE, DROP, HEARTBEAT, HOLD, LEAVE, pairKeys, pairOfLeasesKey, RELEASE, RENEW } from './lua.ts';
import type { AcquireAnswer, ClusterStore, Pair, PairHeld } from './store-port.ts';
import { TENANT_ADMIT, TENANT_REJOIN, TENANT_RENEW, TENANT_SETTLE, tenantKeys } from './tenant-lua.ts';
import type { LeaderStore } from './leader-lease.ts';
import type { SharedAnswer, SharedRejoin, SharedReserve, SharedSettle, TenantStore } from './tenant-store-port.ts';
import { TENANT_PEEK, USAGE_PUBLISH, USAGE_READ, usageKey } from './usage-lua.ts';
import type { PublishedPart, TenantPeek, UsageBoardStore } from './usage-board-port.ts';
import { CLAIM_FIELDS, claimArgs, claimOf, nodeOfSwitchKey, replicasOfLeases, SETTLED_TTL_MS, SWITCH_RELEASE, SWITCH_RENEW, SWITCH_TAKE, switchKey, type SwitchClaimFields, type SwitchRefusal } from './switch-lua.ts';

/** A fallback batch's marker outlives every day key it may have touched. */
const REJOIN_MARKER_MS = 90_000_000;

export interface RedisStoreOptions {
  readonly url: string;
  readonly password: string | undefined;
  readonly replica: string;
  readonly leaseTtlMs: number;
  readonly callTimeoutMs: number;
  /** Key prefix (one site's keys; tests give each run its own). */
  readonly prefix: string;
}

interface Script {
  readonly lua: string;
  sha: string | undefined;
}

function numbers(value: unknown): number[] {
  return Array.isArray(value) ? value.map((v) => Number(v)) : [Number(value)];
}

export class RedisStore implements ClusterStore, TenantStore, LeaderStore, UsageBoardStore {
  readonly #options: RedisStoreOptions;
  readonly #client: Redis;
  readonly #subscriber: Redis;
  readonly #channel: string;
  readonly #scripts = { acquire: { lua: ACQUIRE, sha: undefined }, release: { lua: RELEASE, sha: undefined }, leave: { lua: LEAVE, sha: undefined }, renew: { lua: RENEW, sha: undefined }, heartbeat: { lua: HEARTBEAT, sha: undefined }, tenantAdmit: { lua: TENANT_ADMIT, sha: undefined }, tenantSettle: { lua: TENANT_SETTLE, sha: undefined }, tenantRenew: { lua: TENANT_RENEW, sha: undefined }, tenantRejoin: { lua: TENANT_REJOIN, sha: undefined }, hold: { lua: HOLD, sha: undefined }, drop: { lua: DROP, sha: undefined }, switchTake: { lua: SWITCH_TAKE, sha: undefined }, switchRenew: { lua: SWITCH_RENEW, sha: undefined }, switchRelease: { lua: SWITCH_RELEASE, sha: undefined } } satisfies Record<string, Script>;
  readonly #listeners: ((pair: Pair) => void)[] = [];
  /** The site's /admin/tenants (usage-lua.ts). */
  readonly #usageScripts = { publish: { lua: USAGE_PUBLISH, sha: undefined }, read: { lua: USAGE_READ, sha: undefined }, peek: { lua: TENANT_PEEK, sha: undefined } } satisfies Record<string, Script>;
  readonly #switchListeners: ((node: string) => void)[] = [];

  constructor(options: RedisStoreOptions) {
    this.#options = options;
    this.#channel = `${options.prefix}freed`;
    const settings = {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.callTimeoutMs,
      connectTimeout: options.callTimeoutMs,
      password: options.password,
      // Reconnect soon and keep trying; each failed call in between fails at once.
      retryStrategy: (times: number) => Math.min(100 * times, 1000),
    };
    this.#client = new Redis(options.url, settings);
    this.#subscriber = new Redis(options.url, { ...settings, enableOfflineQueue: true, commandTimeout: undefined, autoResubscribe: true });
    // Errors also reach the callers of the failed calls; the client's own event must not crash the process.
    this.#client.on('error', () => {});
    this.#subscriber.on('error', () => {});
    this.#subscriber.on('message', (channel: string, message: string) => {
      if (channel !== this.#channel) return;
      const pair = pairOfLeasesKey(options.prefix, message);
      if (pair !== undefined) for (const listener of this.#listeners) listener(pair);
      const node = pair === undefined ? nodeOfSwitchKey(options.prefix, message) : undefined;
      if (node !== undefined) for (const listener of this.#switchListeners) listener(node);
    });
  }

  /** Connects both connections (bounded); rejects when the store cannot be reached now. */
  async connect(): Promise<void> {
    // The subscriber queues its SUBSCRIBE until it is connected (and resubscribes after a reconnect).
    this.#subscriber.connect().catch(() => undefined);
    this.#subscriber.subscribe(this.#channel).catch(() => undefined);
    await this.#client.connect();
  }

  async acquire(pair: Pair, leaseId: string, waiterId: string, limit: number, modelsMax = 0): Promise<AcquireAnswer> {
    const k = pairKeys(this.#options.prefix, pair.node, pair.model);
    const keys = [k.leases, k.queue, k.waits, k.ticket, switchKey(this.#options.prefix, pair.node)];
    const answer = numbers(await this.#run(this.#scripts.acquire, keys, [leaseId, waiterId, String(limit), String(this.#options.leaseTtlMs), this.#channel, this.#options.replica, pair.model, String(modelsMax)]));
    const told = { granted: answer[0] === 1, used: answer[1] ?? 0, ahead: answer[2] ?? 0 };
    return answer[0] === 2 ? { ...told, switching: true } : told;
  }

  async release(pair: Pair, leaseId: string): Promise<void> {
    const k = pairKeys(this.#options.prefix, pair.node, pair.model);
    await this.#run(this.#scripts.release, [k.leases], [leaseId, this.#channel]);
  }

  async leave(pair: Pair, waiterId: string): Promise<void> {
    const k = pairKeys(this.#options.prefix, pair.node, pair.model);
    await this.#run(this.#scripts.leave, [k.queue, k.waits, k.leases], [waiterId, this.#channel]);
  }

  async renew(held: readonly PairHeld[]): Promise<number> {
    const ttl = String(this.#options.leaseTtlMs);
    await Promise.all(held.map((h) => {
      const k = pairKeys(this.#options.prefix, h.pair.node, h.pair.model);
      return this.#run(this.#scripts.renew, [k.leases, k.waits], [ttl, String(h.leases.length), ...h.leases, ...h.waiters]);
    }));
    return Number(await this.#run(this.#scripts.heartbeat, [`${this.#options.prefix}replicas`], [this.#options.replica, ttl]));
  }

  async claimOnce(key: string, windowMs: number): Promise<boolean> {
    return (await this.#client.set(`${this.#options.prefix}once:${key}`, this.#options.replica, 'PX', Math.max(1, Math.round(windowMs)), 'NX')) === 'OK';
  }

  async reserve(ask: SharedReserve): Promise<SharedAnswer> {
    const k = tenantKeys(this.#options.prefix, ask.tenant);
    const limit = (value: number | undefined): string => String(value ?? -1);
    const { limits, days } = ask;
    const args = [ask.ticket, limit(limits.maxConcurrent), limit(limits.requestsPerMinute), limit(limits.tokensPerMinute), limit(limits.tokensPerDay), String(Math.round(ask.cost)), String(this.#options.leaseTtlMs), String(Math.round(days.graceMs)), ask.force ? '1' : '0', String(days.startMs)];
    const answer = numbers(await this.#run(this.#scripts.tenantAdmit, [k.meter, k.inflight, k.open, ...days.days.map((d) => k.day(d))], args));
    const day = days.days[Math.min(2, Math.max(0, (answer[5] ?? 2) - 1))] ?? days.days[1];
    return { admitted: answer[0] === 1, inFlight: answer[1] ?? 0, requestsUsed: answer[2] ?? 0, tokensUsed: answer[3] ?? 0, todayTokens: answer[4] ?? 0, day, storeNowMs: answer[6] ?? 0 };
  }

  async settle(done: SharedSettle): Promise<boolean> {
    const k = tenantKeys(this.#options.prefix, done.tenant);
    const { admitted, ended } = done;
    const args = [done.ticket, String(done.tokensPerMinute ?? -1), String(Math.round(done.used)), String(Math.round(ended.graceMs)), String(ended.startMs)];
    const keys = [k.meter, k.inflight, k.open, ...admitted.days.map((d) => k.day(d)), ...ended.days.map((d) => k.day(d))];
    return Number(await this.#run(this.#scripts.tenantSettle, keys, args)) === 1;
  }

  async rejoin(batch: SharedRejoin): Promise<boolean> {
    const k = tenantKeys(this.#options.prefix, batch.tenant);
    const args = [String(REJOIN_MARKER_MS), String(batch.requestsPerMinute ?? -1), String(batch.tokensPerMinute ?? -1), String(Math.round(batch.requests)), String(Math.round(batch.tokens)), String(Math.max(0, Math.round(batch.ageMs))), String(Math.round(batch.graceMs))];
    for (const d of batch.days) args.push(String(d.startMs), String(Math.round(d.tokens)));
    return Number(await this.#run(this.#scripts.tenantRejoin, [k.meter, k.rejoin(batch.id), ...batch.days.map((d) => k.day(d.day))], args)) === 1;
  }

  async renewTickets(open: ReadonlyMap<string, readonly string[]>): Promise<void> {
    const ttl = String(this.#options.leaseTtlMs);
    await Promise.all([...open].map(([tenant, tickets]) => this.#run(this.#scripts.tenantRenew, [tenantKeys(this.#options.prefix, tenant).inflight], [ttl, ...tickets])));
  }

  async holdLease(key: string, holder: string, ttlMs: number): Promise<boolean> {
    return Number(await this.#run(this.#scripts.hold, [`${this.#options.prefix}leader:${key}`], [holder, String(Math.max(1, Math.round(ttlMs)))])) === 1;
  }

  async dropLease(key: string, holder: string): Promise<void> {
    await this.#run(this.#scripts.drop, [`${this.#options.prefix}leader:${key}`], [holder]);
  }

  async publishUsage(body: string, keepMs: number): Promise<void> {
    await this.#run(this.#usageScripts.publish, [usageKey(this.#options.prefix)], [this.#options.replica, body, String(Math.max(1, Math.round(keepMs)))]);
  }

  async readUsage(): Promise<readonly PublishedPart[]> {
    const answer = await this.#run(this.#usageScripts.read, [usageKey(this.#options.prefix)], []);
    return publishedParts(answer);
  }

  async peekTenant(tenant: string, day: string): Promise<TenantPeek> {
    const k = tenantKeys(this.#options.prefix, tenant);
    const a = (await this.#run(this.#usageScripts.peek, [k.meter, k.inflight, k.day(day)], [])) as unknown[];
    const meter = (used: unknown, at: unknown): TenantPeek['requests'] => (used === null || at === null || used === undefined || at === undefined ? undefined : { used: Number(used), atMs: Number(at) });
    return { nowMs: Number(a[0]), inFlight: Number(a[1] ?? 0), requests: meter(a[2], a[3]), tokens: meter(a[4], a[5]), dayTokens: Number(a[6] ?? 0) };
  }

  /** Takes `node`'s switch claim (or updates this holder's own): undefined = taken; else who holds it, or who uses its victim. */
  async takeSwitch(node: string, claim: SwitchClaimFields): Promise<SwitchRefusal | undefined> {
    const key = switchKey(this.#options.prefix, node);
    const unloads = claim.action === 'unload' ? claim.model : claim.victim;
    const victimLeases = unloads === undefined ? key : pairKeys(this.#options.prefix, node, unloads).leases;
    const answer = await this.#run(this.#scripts.switchTake, [key, victimLeases], [claim.holder, String(this.#options.leaseTtlMs), ...claimArgs(claim), this.#channel]);
    const values = Array.isArray(answer) ? answer : [answer];
    const code = Number(values[0]);
    if (code === 1) return undefined;
    if (code === 2) return { kind: 'victim_busy', victim: unloads ?? '', replicas: replicasOfLeases(values.slice(1)) };
    const other = claimOf(values.slice(1));
    // A holder whose fields do not read as a claim still holds the node.
    return { kind: 'held', claim: other ?? { ...claim, holder: '?', replica: 'unknown' } };
  }

  /** Renews this holder's claim (registers it again if the store lost it); false = another holds it now. */
  async renewSwitch(node: string, claim: SwitchClaimFields): Promise<boolean> {
    return Number(await this.#run(this.#scripts.switchRenew, [switchKey(this.#options.prefix, node)], [claim.holder, String(this.#options.leaseTtlMs), ...claimArgs(claim)])) === 1;
  }

  async releaseSwitch(node: string, holder: string): Promise<void> {
    await this.#run(this.#scripts.switchRelease, [switchKey(this.#options.prefix, node)], [holder, this.#channel, String(SETTLED_TTL_MS)]);
  }

  /** The claim on `node` now, whoever holds it, or the record of its last switch (`settled`). */
  async peekSwitch(node: string): Promise<SwitchClaimFields | undefined> {
    return claimOf(await this.#client.hmget(switchKey(this.#options.prefix, node), ...CLAIM_FIELDS));
  }

  /** Called with the node whose switch claim changed (taken, updated, released); messages may be lost. */
  onSwitch(listener: (node: string) => void): void {
    this.#switchListeners.push(listener);
  }

  onFreed(listener: (pair: Pair) => void): void {
    this.#listeners.push(listener);
  }

  /** Sends what is still queued (the last releases) and closes; bounded by the call timeout, then cut. */
  async close(): Promise<void> {
    this.#subscriber.disconnect();
    await this.#client.quit().catch(() => undefined);
    this.#client.disconnect();
  }

  /** EVALSHA, loading the script again when the server lost it (a restart without persistence). */
  async #run(script: Script, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    if (script.sha !== undefined) {
      try {
        return await this.#client.evalsha(script.sha, keys.length, ...keys, ...args);
      } catch (error) {
        if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      }
    }
    script.sha = String(await this.#client.script('LOAD', script.lua));
    return this.#client.evalsha(script.sha, keys.length, ...keys, ...args);
  }
}

/** USAGE_READ's answer as parts; a value not of the written shape is skipped. */
function publishedParts(answer: unknown): PublishedPart[] {
  if (!Array.isArray(answer)) return [];
  const nowMs = Number(answer[0]);
  const flat: unknown = answer[1];
  if (!Array.isArray(flat)) return [];
  const parts: PublishedPart[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const value = String(flat[i + 1]);
    const space = value.indexOf(' ');
    const atMs = Number(value.slice(0, space));
    if (space < 0 || !Number.isFinite(atMs)) continue;
    parts.push({ replica: String(flat[i]), ageMs: nowMs - atMs, body: value.slice(space + 1) });
  }
  return parts;
}
