// SharedTenants over an in-memory store with the scripts' semantics (a settle applies once per
// ticket, a rejoin batch once per id), its replies lost or delayed on demand: each request is
// settled once, in one place, and what the replica used in fallback reaches the shared day once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import type { SharedAnswer, SharedRejoin, SharedReserve, SharedSettle, TenantStore } from '#src/cluster/index.ts';
import { SharedTenants } from '#src/cluster/cluster-tenants.ts';
import { TenantLedger } from '#src/tenants/index.ts';
import type { TenantSpec } from '#src/tenants/tenants-config.ts';
import { tenantSpec } from '#test/fixtures/builders.ts';

const NOON = Date.UTC(2026, 11, 2, 12);

/** The store: `down` fails every call unapplied; `lostReplies` applies and then fails; `paused` queues (applied on `resume`) and fails. */
class FakeStore implements TenantStore {
  readonly days = new Map<string, number>();
  readonly open = new Map<string, { cost: number; day: string }>();
  readonly markers = new Set<string>();
  mode: 'up' | 'down' | 'lostReplies' | 'paused' = 'up';
  skewMs = 0;
  readonly #queued: (() => void)[] = [];
  readonly clock: ManualClock;
  constructor(clock: ManualClock) {
    this.clock = clock;
  }
  resume(): void {
    this.mode = 'up';
    for (const apply of this.#queued.splice(0)) apply();
  }
  #call<T>(apply: () => T): Promise<T> {
    if (this.mode === 'down') return Promise.reject(new Error('ECONNREFUSED'));
    if (this.mode === 'paused') {
      this.#queued.push(() => void apply());
      return Promise.reject(new Error('Command timed out'));
    }
    const value = apply();
    return this.mode === 'lostReplies' ? Promise.reject(new Error('Command timed out')) : Promise.resolve(value);
  }
  #pick(days: SharedReserve['days']): string {
    const now = this.clock.now() + this.skewMs;
    return days.days[now < days.startMs ? 0 : now >= days.startMs + 86_400_000 ? 2 : 1];
  }
  reserve(ask: SharedReserve): Promise<SharedAnswer> {
    return this.#call(() => {
      const day = this.#pick(ask.days);
      const today = this.days.get(day) ?? 0;
      const admitted = ask.limits.tokensPerDay === undefined || today + ask.cost <= ask.limits.tokensPerDay;
      if (admitted) {
        this.days.set(day, today + ask.cost);
        this.open.set(ask.ticket, { cost: ask.cost, day });
      }
      return {
        admitted,
        inFlight: 0,
        requestsUsed: 0,
        tokensUsed: 0,
        todayTokens: today,
        day,
        storeNowMs: this.clock.now() + this.skewMs,
      };
    });
  }
  settle(done: SharedSettle): Promise<boolean> {
    return this.#call(() => {
      const held = this.open.get(done.ticket);
      if (held === undefined) return false;
      this.open.delete(done.ticket);
      this.days.set(held.day, (this.days.get(held.day) ?? 0) - held.cost);
      const ended = this.#pick(done.ended);
      this.days.set(ended, (this.days.get(ended) ?? 0) + done.used);
      return true;
    });
  }
  rejoin(batch: SharedRejoin): Promise<boolean> {
    return this.#call(() => {
      const marker = `${batch.tenant}:${batch.id}`;
      if (this.markers.has(marker)) return false;
      this.markers.add(marker);
      for (const d of batch.days) this.days.set(d.day, (this.days.get(d.day) ?? 0) + d.tokens);
      return true;
    });
  }
  renewTickets(): Promise<void> {
    return this.#call(() => undefined);
  }
}

class FakeGate {
  #shared = true;
  readonly #hooks: (() => void)[] = [];
  shared(): boolean {
    return this.#shared;
  }
  storeFailed(): void {
    this.#shared = false;
  }
  status(): { liveReplicas: number } & Record<string, unknown> {
    return { liveReplicas: 2 };
  }
  onRejoin(hook: () => void): void {
    this.#hooks.push(hook);
  }
  rejoin(): void {
    this.#shared = true;
    for (const hook of this.#hooks) hook();
  }
}

function spec(name: string, tokensPerDay: number): TenantSpec {
  return tenantSpec(name, { keys: [`sk-${name}`], tokensPerDay });
}

function setup(): { store: FakeStore; gate: FakeGate; tenants: SharedTenants; clock: ManualClock; logs: string[] } {
  const clock = new ManualClock(NOON);
  const store = new FakeStore(clock);
  const gate = new FakeGate();
  const logs: string[] = [];
  const ledger = new TenantLedger(() => clock.now(), [spec('t', 10_000)]);
  const tenants = new SharedTenants({
    ledger,
    store,
    gate: gate as unknown as ConstructorParameters<typeof SharedTenants>[0]['gate'],
    clock,
    replica: 'r1',
    renewEveryMs: 1_000,
    logger: { info: (_f, msg) => void logs.push(msg) },
  });
  return { store, gate, tenants, clock, logs };
}

const ask = { tenant: 't', model: 'm', promptTokens: 10, reserveTokens: 100 };
const served = (tokens: number): { served: true; promptTokens: number; completionTokens: number } => ({
  served: true,
  promptTokens: 0,
  completionTokens: tokens,
});
const idle = async (): Promise<void> => {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

async function admitted(tenants: SharedTenants): Promise<(tokens: number) => void> {
  const a = await tenants.admit(ask, true);
  assert.equal(a.kind, 'admitted');
  return (tokens) => (a.kind === 'admitted' ? a.settle(served(tokens)) : undefined);
}

test('the settle rule: reserved in the store = settled in the store once (kept over a loss); admitted in fallback = tallied, added at the rejoin', async () => {
  const cases: [string, (s: FakeStore) => void][] = [
    ['the store down (nothing sent reaches it)', (s) => (s.mode = 'down')],
    ['replies lost (every call applied, none answered)', (s) => (s.mode = 'lostReplies')],
    ['the store paused (calls applied late, when it resumes)', (s) => (s.mode = 'paused')],
  ];
  for (const [what, lose] of cases) {
    const { store, gate, tenants } = setup();
    const before = await admitted(tenants); // reserved in the store, 100
    (await admitted(tenants))(40); // settled in the store: 40
    const open = await admitted(tenants); // still open when the store goes
    lose(store);
    // The first call after the loss fails: the gate falls back (a reserve lost when paused/lostReplies).
    const third = await admitted(tenants);
    assert.equal(gate.shared(), false, what);
    before(25); // ends in fallback: kept for the rejoin
    third(5); // admitted in fallback: tallied
    (await admitted(tenants))(7); // fallback too
    const stillOpen = await admitted(tenants); // fallback, open at the rejoin
    store.resume();
    gate.rejoin();
    await idle();
    open(30); // reserved in the store before the loss, settles after the rejoin: in the store
    stillOpen(11); // admitted in fallback, settles after the rejoin: the next flush
    await tenants.flush();
    await idle();
    assert.deepEqual(tenants.unconfirmed('t'), { tokens: 0, settles: 0 }, `${what}: nothing left unconfirmed`);
    assert.equal(
      store.days.get('2026-12-02'),
      40 + 25 + 30 + 5 + 7 + 11,
      `${what}: the shared day is the sum of what was used, once`,
    );
    assert.equal(store.open.size, 0, `${what}: no reservation left open in the store`);
  }
});

test('a rejoin whose replies are lost is sent again under the same batch id: applied once', async () => {
  const { store, gate, tenants, logs } = setup();
  store.mode = 'down';
  const a = await admitted(tenants);
  a(60);
  store.mode = 'lostReplies';
  gate.rejoin();
  await idle();
  assert.equal(gate.shared(), false, 'the lost reply is a lost store');
  assert.equal(store.days.get('2026-12-02'), 60, 'applied by the store');
  assert.equal(tenants.unconfirmed('t').tokens, 60, 'but kept: the store did not confirm');
  store.mode = 'up';
  gate.rejoin();
  await idle();
  assert.equal(store.days.get('2026-12-02'), 60, 'not twice');
  assert.equal(tenants.unconfirmed('t').tokens, 0, 'dropped once confirmed');
  assert.ok(logs.includes('tenant usage of the fallback added to the shared counters'));
});

test("the day is the store's: a replica 13 h ahead counts today's budget, and its fallback day by the offset the store showed", async () => {
  const { store, gate, tenants, clock } = setup();
  clock.advance(13 * 3_600_000); // the replica's clock: tomorrow 01:00
  store.skewMs = -13 * 3_600_000; // the store's: today 12:00
  (await admitted(tenants))(10);
  assert.deepEqual([...store.days.entries()], [['2026-12-02', 10]]);
  store.mode = 'down';
  (await admitted(tenants))(20); // fails over: fallback
  (await admitted(tenants))(30);
  store.mode = 'up';
  gate.rejoin();
  await idle();
  assert.deepEqual([...store.days.entries()], [['2026-12-02', 10 + 20 + 30]], "one day key, the store's");
});
