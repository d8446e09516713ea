// The cluster store over Redis/Valkey (iovalkey: bench/store-clients.ts measured the three clients).
// Loaded only by a dynamic import when [cluster] is configured. Two connections: commands, and a
// subscriber for the free-slot announcements. Commands fail at once while disconnected (no offline
// queue) and time out after `callTimeoutMs`; the client reconnects by itself in the background.
// Every answer is read by its decoder (store-answers.ts) before it leaves this port, and every
// failure — a nonsense answer included — rejects with a StoreError naming the store's address and
// the root cause (store-reason.ts): the callers treat either as a lost store.

import { Redis } from 'iovalkey';
import { ACQUIRE, DROP, HEARTBEAT, HOLD, LEAVE, pairKeys, pairOfLeasesKey, RELEASE, RENEW } from './lua.ts';
import type { AcquireAnswer, ClusterStore, Pair, PairHeld } from './store-port.ts';
import { TENANT_ADMIT, TENANT_REJOIN, TENANT_RENEW, TENANT_SETTLE, tenantKeys } from './tenant-lua.ts';
import type { LeaderStore } from './leader-lease.ts';
import type { SharedAnswer, SharedRejoin, SharedReserve, SharedSettle, TenantStore } from './tenant-store-port.ts';
import { TENANT_PEEK, USAGE_PUBLISH, USAGE_READ, usageKey } from './usage-lua.ts';
import type { PublishedPart, TenantPeek, UsageBoardStore } from './usage-board-port.ts';
import {
  CLAIM_FIELDS,
  claimArgs,
  claimOf,
  nodeOfSwitchKey,
  replicasOfLeases,
  SETTLED_TTL_MS,
  SWITCH_RELEASE,
  SWITCH_RENEW,
  SWITCH_TAKE,
  switchKey,
  type SwitchClaimFields,
  type SwitchRefusal,
} from './switch-lua.ts';
import {
  acquireAnswer,
  holdsAnswer,
  constantAnswer,
  fieldsAnswer,
  flagAnswer,
  liveReplicasAnswer,
  renewAnswer,
  scriptShaAnswer,
  setNxAnswer,
  okAnswer,
  sessionTargetAnswer,
  switchTakeAnswer,
  tenantAdmitAnswer,
  tenantPeekAnswer,
  usageReadAnswer,
} from './store-answers.ts';
import { connectionCause, StoreError, storeReason } from './store-reason.ts';
import { byNodeAndModel, type HoldRecord, type HoldStore, type StoredHold } from '#src/nodes/index.ts';
import { HOLD_LIST, HOLD_PUT, holdIndexKey, holdKey, MAX_HOLDS } from './hold-lua.ts';

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
  /** The call's name in a reason ("store answered … to acquire"). */
  readonly name: string;
  readonly lua: string;
  sha: string | undefined;
}

function script(name: string, lua: string): Script {
  return { name, lua, sha: undefined };
}

export class RedisStore implements ClusterStore, TenantStore, LeaderStore, UsageBoardStore, HoldStore {
  readonly holdsScope = 'cluster';
  readonly #options: RedisStoreOptions;
  readonly #client: Redis;
  readonly #subscriber: Redis;
  readonly #channel: string;
  readonly #scripts = {
    acquire: script('acquire', ACQUIRE),
    release: script('release', RELEASE),
    leave: script('leave', LEAVE),
    renew: script('renew', RENEW),
    heartbeat: script('heartbeat', HEARTBEAT),
    tenantAdmit: script('tenant reserve', TENANT_ADMIT),
    tenantSettle: script('tenant settle', TENANT_SETTLE),
    tenantRenew: script('tenant renew', TENANT_RENEW),
    tenantRejoin: script('tenant rejoin', TENANT_REJOIN),
    hold: script('leader hold', HOLD),
    drop: script('leader drop', DROP),
    switchTake: script('switch take', SWITCH_TAKE),
    switchRenew: script('switch renew', SWITCH_RENEW),
    switchRelease: script('switch release', SWITCH_RELEASE),
    // The site's /admin/tenants (usage-lua.ts).
    publish: script('usage publish', USAGE_PUBLISH),
    read: script('usage read', USAGE_READ),
    peek: script('tenant peek', TENANT_PEEK),
    // The operator's holds (hold-lua.ts).
    holdPut: script('hold put', HOLD_PUT),
    holdList: script('holds list', HOLD_LIST),
  } satisfies Record<string, Script>;
  readonly #listeners: ((pair: Pair) => void)[] = [];
  readonly #switchListeners: ((node: string) => void)[] = [];
  /** The command connection's last error (or close) since it was last ready: the cause of calls failing meanwhile. */
  #lastCause: string | undefined;

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
    this.#subscriber = new Redis(options.url, {
      ...settings,
      enableOfflineQueue: true,
      commandTimeout: undefined,
      autoResubscribe: true,
    });
    // Errors also reach the callers of the failed calls (with this cause); the client's own event must not crash the process.
    this.#client.on('error', (error: unknown) => {
      this.#lastCause = connectionCause(error);
    });
    this.#client.on('close', () => {
      this.#lastCause ??= 'the store closed the connection';
    });
    this.#client.on('ready', () => {
      this.#lastCause = undefined;
    });
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
    await this.#client.connect().catch((error: unknown) => {
      throw this.#failed(error);
    });
  }

  async acquire(pair: Pair, leaseId: string, waiterId: string, limit: number, modelsMax = 0): Promise<AcquireAnswer> {
    const k = pairKeys(this.#options.prefix, pair.node, pair.model);
    const keys = [k.leases, k.queue, k.waits, k.ticket, switchKey(this.#options.prefix, pair.node)];
    return this.#run(
      this.#scripts.acquire,
      keys,
      [
        leaseId,
        waiterId,
        String(limit),
        String(this.#options.leaseTtlMs),
        this.#channel,
        this.#options.replica,
        pair.model,
        String(modelsMax),
      ],
      acquireAnswer,
    );
  }

  async release(pair: Pair, leaseId: string): Promise<void> {
    const k = pairKeys(this.#options.prefix, pair.node, pair.model);
    await this.#run(this.#scripts.release, [k.leases], [leaseId, this.#channel], (a) => flagAnswer(a, 'release'));
  }

  async leave(pair: Pair, waiterId: string): Promise<void> {
    const k = pairKeys(this.#options.prefix, pair.node, pair.model);
    await this.#run(this.#scripts.leave, [k.queue, k.waits, k.leases], [waiterId, this.#channel], (a) => flagAnswer(a, 'leave'));
  }

  async renew(held: readonly PairHeld[]): Promise<number> {
    const ttl = String(this.#options.leaseTtlMs);
    await Promise.all(
      held.map((h) => {
        const k = pairKeys(this.#options.prefix, h.pair.node, h.pair.model);
        return this.#run(
          this.#scripts.renew,
          [k.leases, k.waits],
          [ttl, String(h.leases.length), ...h.leases, ...h.waiters],
          (a) => renewAnswer(a, h.leases.length),
        );
      }),
    );
    return this.#run(this.#scripts.heartbeat, [`${this.#options.prefix}replicas`], [this.#options.replica, ttl], (a) =>
      liveReplicasAnswer(a),
    );
  }

  async claimOnce(key: string, windowMs: number): Promise<boolean> {
    return this.#ask(
      () =>
        this.#client.set(
          `${this.#options.prefix}once:${key}`,
          this.#options.replica,
          'PX',
          Math.max(1, Math.round(windowMs)),
          'NX',
        ),
      (a) => setNxAnswer(a, 'wake claim (SET NX)'),
    );
  }

  async reserve(ask: SharedReserve): Promise<SharedAnswer> {
    const k = tenantKeys(this.#options.prefix, ask.tenant);
    const limit = (value: number | undefined): string => String(value ?? -1);
    const { limits, days } = ask;
    const args = [
      ask.ticket,
      limit(limits.maxConcurrent),
      limit(limits.requestsPerMinute),
      limit(limits.tokensPerMinute),
      limit(limits.tokensPerDay),
      String(Math.round(ask.cost)),
      String(this.#options.leaseTtlMs),
      String(Math.round(days.graceMs)),
      ask.force ? '1' : '0',
      String(days.startMs),
    ];
    return this.#run(this.#scripts.tenantAdmit, [k.meter, k.inflight, k.open, ...days.days.map((d) => k.day(d))], args, (a) =>
      tenantAdmitAnswer(a, days),
    );
  }

  async settle(done: SharedSettle): Promise<boolean> {
    const k = tenantKeys(this.#options.prefix, done.tenant);
    const { admitted, ended } = done;
    const args = [
      done.ticket,
      String(done.tokensPerMinute ?? -1),
      String(Math.round(done.used)),
      String(Math.round(ended.graceMs)),
      String(ended.startMs),
    ];
    const keys = [k.meter, k.inflight, k.open, ...admitted.days.map((d) => k.day(d)), ...ended.days.map((d) => k.day(d))];
    return this.#run(this.#scripts.tenantSettle, keys, args, (a) => flagAnswer(a, 'tenant settle'));
  }

  async rejoin(batch: SharedRejoin): Promise<boolean> {
    const k = tenantKeys(this.#options.prefix, batch.tenant);
    const args = [
      String(REJOIN_MARKER_MS),
      String(batch.requestsPerMinute ?? -1),
      String(batch.tokensPerMinute ?? -1),
      String(Math.round(batch.requests)),
      String(Math.round(batch.tokens)),
      String(Math.max(0, Math.round(batch.ageMs))),
      String(Math.round(batch.graceMs)),
    ];
    for (const d of batch.days) args.push(String(d.startMs), String(Math.round(d.tokens)));
    return this.#run(
      this.#scripts.tenantRejoin,
      [k.meter, k.rejoin(batch.id), ...batch.days.map((d) => k.day(d.day))],
      args,
      (a) => flagAnswer(a, 'tenant rejoin'),
    );
  }

  async renewTickets(open: ReadonlyMap<string, readonly string[]>): Promise<void> {
    const ttl = String(this.#options.leaseTtlMs);
    await Promise.all(
      [...open].map(([tenant, tickets]) =>
        this.#run(this.#scripts.tenantRenew, [tenantKeys(this.#options.prefix, tenant).inflight], [ttl, ...tickets], (a) =>
          constantAnswer(a, 'tenant renew', 1),
        ),
      ),
    );
  }

  async holdLease(key: string, holder: string, ttlMs: number): Promise<boolean> {
    return this.#run(
      this.#scripts.hold,
      [`${this.#options.prefix}leader:${key}`],
      [holder, String(Math.max(1, Math.round(ttlMs)))],
      (a) => flagAnswer(a, 'leader hold'),
    );
  }

  async dropLease(key: string, holder: string): Promise<void> {
    await this.#run(this.#scripts.drop, [`${this.#options.prefix}leader:${key}`], [holder], (a) =>
      constantAnswer(a, 'leader drop', 1),
    );
  }

  async publishUsage(body: string, keepMs: number): Promise<void> {
    await this.#run(
      this.#scripts.publish,
      [usageKey(this.#options.prefix)],
      [this.#options.replica, body, String(Math.max(1, Math.round(keepMs)))],
      (a) => constantAnswer(a, 'usage publish', 1),
    );
  }

  async readUsage(): Promise<readonly PublishedPart[]> {
    return this.#run(this.#scripts.read, [usageKey(this.#options.prefix)], [], usageReadAnswer);
  }

  async peekTenant(tenant: string, day: string): Promise<TenantPeek> {
    const k = tenantKeys(this.#options.prefix, tenant);
    return this.#run(this.#scripts.peek, [k.meter, k.inflight, k.day(day)], [], tenantPeekAnswer);
  }

  /** Takes `node`'s switch claim (or updates this holder's own): undefined = taken; else who holds it, or who uses its victim. */
  async takeSwitch(node: string, claim: SwitchClaimFields): Promise<SwitchRefusal | undefined> {
    const key = switchKey(this.#options.prefix, node);
    const unloads = claim.action === 'unload' ? claim.model : claim.victim;
    const victimLeases = unloads === undefined ? key : pairKeys(this.#options.prefix, node, unloads).leases;
    const answer = await this.#run(
      this.#scripts.switchTake,
      [key, victimLeases],
      [claim.holder, String(this.#options.leaseTtlMs), ...claimArgs(claim), this.#channel],
      (a) => switchTakeAnswer(a, CLAIM_FIELDS.length),
    );
    if (answer.code === 1) return undefined;
    if (answer.code === 2) return { kind: 'victim_busy', victim: unloads ?? '', replicas: replicasOfLeases(answer.ids) };
    const other = claimOf(answer.fields);
    // A holder whose fields do not read as a claim still holds the node.
    return { kind: 'held', claim: other ?? { ...claim, holder: '?', replica: 'unknown' } };
  }

  /** Renews this holder's claim (registers it again if the store lost it); false = another holds it now. */
  async renewSwitch(node: string, claim: SwitchClaimFields): Promise<boolean> {
    return this.#run(
      this.#scripts.switchRenew,
      [switchKey(this.#options.prefix, node)],
      [claim.holder, String(this.#options.leaseTtlMs), ...claimArgs(claim)],
      (a) => flagAnswer(a, 'switch renew'),
    );
  }

  async releaseSwitch(node: string, holder: string): Promise<void> {
    await this.#run(
      this.#scripts.switchRelease,
      [switchKey(this.#options.prefix, node)],
      [holder, this.#channel, String(SETTLED_TTL_MS)],
      (a) => flagAnswer(a, 'switch release'),
    );
  }

  /** The claim on `node` now, whoever holds it, or the record of its last switch (`settled`). */
  async peekSwitch(node: string): Promise<SwitchClaimFields | undefined> {
    return claimOf(
      await this.#ask(
        () => this.#client.hmget(switchKey(this.#options.prefix, node), ...CLAIM_FIELDS),
        (a) => fieldsAnswer(a, 'switch peek (HMGET)', CLAIM_FIELDS.length),
      ),
    );
  }

  /** The operator's hold (or its end, `released`), ended by the store's clock after `hold.forMs` (PX); the writer's replica is named in it. */
  async putHold(hold: HoldRecord): Promise<void> {
    const value = JSON.stringify({
      node: hold.node,
      model: hold.model,
      kind: hold.kind,
      replica: hold.replica ?? this.#options.replica,
      for: Math.max(1, Math.round(hold.forMs)),
    });
    const keys = [holdKey(this.#options.prefix, hold.node, hold.model), holdIndexKey(this.#options.prefix)];
    await this.#run(this.#scripts.holdPut, keys, [value, String(Math.max(1, Math.round(hold.forMs)))], (a) =>
      constantAnswer(a, 'hold put', 1),
    );
  }

  /** The holds (and releases) any replica wrote that the store has not ended, with what is left of each. */
  async listHolds(): Promise<StoredHold[]> {
    return this.#run(this.#scripts.holdList, [holdIndexKey(this.#options.prefix)], [], (a) =>
      holdsAnswer(a, MAX_HOLDS).sort(byNodeAndModel),
    );
  }

  /** A session's (or an answer's) target, to expire `ttlMs` after (by the store's clock): another replica reads it on a miss. */
  async putSession(key: number, target: string, ttlMs: number): Promise<void> {
    await this.#ask(
      () => this.#client.set(`${this.#options.prefix}session:${key}`, target, 'PX', Math.max(1, Math.round(ttlMs))),
      (a) => okAnswer(a, 'session write (SET PX)'),
    );
  }

  /** The target a replica wrote for a session (or an answer), if it has not expired. */
  async getSession(key: number): Promise<string | undefined> {
    return this.#ask(() => this.#client.get(`${this.#options.prefix}session:${key}`), sessionTargetAnswer);
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

  /** EVALSHA (loading the script again when the server lost it: a restart without persistence), its answer decoded. */
  #run<T>(script: Script, keys: readonly string[], args: readonly string[], decode: (answer: unknown) => T): Promise<T> {
    return this.#ask(async () => {
      if (script.sha !== undefined) {
        try {
          return await this.#client.evalsha(script.sha, keys.length, ...keys, ...args);
        } catch (error) {
          if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
        }
      }
      const sha = scriptShaAnswer(await this.#client.script('LOAD', script.lua), script.name);
      script.sha = sha;
      return this.#client.evalsha(sha, keys.length, ...keys, ...args);
    }, decode);
  }

  /** One call: its answer decoded, any failure (a nonsense answer too) a StoreError naming the store and the cause. */
  async #ask<T>(call: () => Promise<unknown>, decode: (answer: unknown) => T): Promise<T> {
    try {
      return decode(await call());
    } catch (error) {
      throw this.#failed(error);
    }
  }

  #failed(error: unknown): StoreError {
    const { url, password, callTimeoutMs } = this.#options;
    return new StoreError(
      storeReason({
        url,
        password,
        error,
        connected: this.#client.status === 'ready',
        lastCause: this.#lastCause,
        timeoutMs: callTimeoutMs,
      }),
      { cause: error },
    );
  }
}
