import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { NodeSpec } from '#src/config/types.ts';
import { ManualClock } from '#src/core/clock.ts';
import { Discoverer } from '#src/discovery/discoverer.ts';
import type { DiscoveryResult } from '#src/discovery/discovery-state.ts';
import { spec } from '#test/fixtures/builders.ts';

const INTERVAL_MS = 10_000;
const MIN_REFRESH_MS = 1_000;

interface FetchCall {
  readonly node: string;
  readonly url: string;
  readonly signal: AbortSignal;
  settle(result: DiscoveryResult): void;
}

/** Records every fetch; each stays pending until the test settles it (or never, for a hung node). */
class FakeFetch {
  readonly calls: FetchCall[] = [];
  readonly fetch = (node: NodeSpec, signal: AbortSignal): Promise<DiscoveryResult> => {
    const { promise, resolve } = Promise.withResolvers<DiscoveryResult>();
    this.calls.push({ node: node.name, url: node.url, signal, settle: resolve });
    return promise;
  };

  callsFor(node: string): FetchCall[] {
    return this.calls.filter((call) => call.node === node);
  }

  last(node: string): FetchCall {
    const call = this.callsFor(node).at(-1);
    assert.ok(call, `no fetch for ${node}`);
    return call;
  }
}

interface Rig {
  readonly clock: ManualClock;
  readonly fake: FakeFetch;
  readonly results: { node: string; result: DiscoveryResult }[];
  readonly discoverer: Discoverer;
}

function nodeSpec(name: string, url = `http://${name}:8000`): NodeSpec {
  return spec(name, { url, kind: 'vllm' });
}

async function startRig(t: TestContext, names: readonly string[]): Promise<Rig> {
  const clock = new ManualClock();
  const fake = new FakeFetch();
  const results: Rig['results'] = [];
  const discoverer = new Discoverer({
    clock,
    intervalMs: INTERVAL_MS,
    fetch: fake.fetch,
    onResult: (node, result) => results.push({ node, result }),
    minRefreshIntervalMs: MIN_REFRESH_MS,
  });
  discoverer.setNodes(names.map((name) => nodeSpec(name)));
  const lifetime = new AbortController();
  t.after(async () => {
    lifetime.abort();
    await discoverer.stop();
  });
  await discoverer.start(lifetime.signal);
  return { clock, fake, results, discoverer };
}

const OK: DiscoveryResult = {
  ok: true,
  models: [{ id: 'm', loaded: true, status: undefined, contextTokens: undefined, aliases: [] }],
};

/** Lets settled fetches run their continuations (no real time passes). */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Whether `promise` has settled after pending continuations ran. */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => {
    settled = true;
  });
  await flush();
  return settled;
}

test('polls every node once at start and then once per interval', async (t) => {
  const { clock, fake } = await startRig(t, ['a', 'b']);
  assert.deepEqual(
    fake.calls.map((call) => call.node),
    ['a', 'b'],
  );
  fake.last('a').settle(OK);
  fake.last('b').settle(OK);
  await flush();
  clock.advance(INTERVAL_MS - 1);
  assert.equal(fake.calls.length, 2);
  clock.advance(1);
  assert.deepEqual(
    fake.calls.map((call) => call.node),
    ['a', 'b', 'a', 'b'],
  );
});

test('hands each finished fetch to onResult with the node name', async (t) => {
  const { fake, results } = await startRig(t, ['a', 'b']);
  const failed: DiscoveryResult = { ok: false, reason: 'timeout', error: 'timed out' };
  fake.last('b').settle(failed);
  fake.last('a').settle(OK);
  await flush();
  assert.deepEqual(results, [
    { node: 'b', result: failed },
    { node: 'a', result: OK },
  ]);
});

test('reports a rejected fetch as a failed result', async (t) => {
  const clock = new ManualClock();
  const results: DiscoveryResult[] = [];
  const discoverer = new Discoverer({
    clock,
    intervalMs: INTERVAL_MS,
    fetch: () => Promise.reject(new Error('socket hang up')),
    onResult: (_node, result) => results.push(result),
    minRefreshIntervalMs: MIN_REFRESH_MS,
  });
  t.after(() => discoverer.stop());
  discoverer.setNodes([nodeSpec('a')]);
  await discoverer.start(new AbortController().signal);
  await flush();
  assert.deepEqual(results, [{ ok: false, reason: 'error', error: 'socket hang up' }]);
});

test('does not start a second fetch for a node while one is in flight', async (t) => {
  const { clock, fake } = await startRig(t, ['a']);
  clock.advance(INTERVAL_MS * 3);
  assert.equal(fake.callsFor('a').length, 1);
  fake.last('a').settle(OK);
  await flush();
  clock.advance(INTERVAL_MS);
  assert.equal(fake.callsFor('a').length, 2);
});

test('a hung node delays neither the rounds nor the results of another node', async (t) => {
  const { clock, fake, results } = await startRig(t, ['hung', 'b']);
  for (let round = 0; round < 3; round++) {
    fake.last('b').settle(OK);
    await flush();
    clock.advance(INTERVAL_MS);
  }
  assert.equal(fake.callsFor('hung').length, 1);
  assert.equal(fake.callsFor('b').length, 4);
  assert.deepEqual(
    results.map((entry) => entry.node),
    ['b', 'b', 'b'],
  );
});

test('refresh starts an immediate fetch and resolves after its result was reported', async (t) => {
  const { fake, results, discoverer } = await startRig(t, ['a']);
  fake.last('a').settle(OK);
  await flush();
  const refreshed = discoverer.refresh(['a']);
  assert.equal(fake.callsFor('a').length, 2);
  assert.equal(await isSettled(refreshed), false);
  fake.last('a').settle(OK);
  await refreshed;
  assert.equal(results.length, 2);
});

test('refresh joins an in-flight fetch instead of starting a second one', async (t) => {
  const { fake, results, discoverer } = await startRig(t, ['a']);
  const first = discoverer.refresh(['a']);
  const second = discoverer.refresh(['a']);
  assert.equal(fake.callsFor('a').length, 1);
  assert.equal(await isSettled(first), false);
  fake.last('a').settle(OK);
  await Promise.all([first, second]);
  assert.equal(results.length, 1);
});

test('refresh skips a node refreshed less than minRefreshIntervalMs ago', async (t) => {
  const { clock, fake, discoverer } = await startRig(t, ['a']);
  fake.last('a').settle(OK);
  await flush();
  const refreshed = discoverer.refresh(['a']);
  fake.last('a').settle(OK);
  await refreshed;
  clock.advance(MIN_REFRESH_MS - 1);
  await discoverer.refresh(['a']);
  assert.equal(fake.callsFor('a').length, 2);
  clock.advance(1);
  void discoverer.refresh(['a']);
  assert.equal(fake.callsFor('a').length, 3);
});

test('a fresh refresh ignores the cooldown and never takes a fetch begun before it', async (t) => {
  const { fake, results, discoverer } = await startRig(t, ['a']);
  // The start's fetch is in flight: a fresh refresh waits for it, then asks again.
  const refreshed = discoverer.refresh(['a'], { fresh: true });
  assert.equal(fake.callsFor('a').length, 1);
  fake.last('a').settle(OK);
  await flush();
  assert.equal(fake.callsFor('a').length, 2, 'a new fetch after the one in flight');
  assert.equal(await isSettled(refreshed), false);
  fake.last('a').settle(OK);
  await refreshed;
  assert.equal(results.length, 2);
  // Within the cooldown a plain refresh is skipped; a fresh one is not.
  await discoverer.refresh(['a']);
  assert.equal(fake.callsFor('a').length, 2);
  const again = discoverer.refresh(['a'], { fresh: true });
  assert.equal(fake.callsFor('a').length, 3);
  fake.last('a').settle(OK);
  await again;
  assert.equal(results.length, 3);
});

test('refresh rounds only the named nodes and ignores unknown names', async (t) => {
  const { fake, discoverer } = await startRig(t, ['a', 'b']);
  fake.last('a').settle(OK);
  fake.last('b').settle(OK);
  await flush();
  void discoverer.refresh(['b', 'nope', 'b']);
  assert.deepEqual(
    fake.calls.map((call) => call.node),
    ['a', 'b', 'b'],
  );
});

test('refresh does not wait for nodes it was not asked about', async (t) => {
  const { fake, discoverer } = await startRig(t, ['hung', 'b']);
  const refreshed = discoverer.refresh(['b']);
  fake.last('b').settle(OK);
  assert.equal(await isSettled(refreshed), true);
});

test('setNodes polls a newly added node at once', async (t) => {
  const { fake, discoverer } = await startRig(t, ['a']);
  discoverer.setNodes([nodeSpec('a'), nodeSpec('new')]);
  assert.deepEqual(
    fake.calls.map((call) => call.node),
    ['a', 'new'],
  );
});

test("setNodes aborts a removed node's fetch, drops its result and stops its timer", async (t) => {
  const { clock, fake, results, discoverer } = await startRig(t, ['a', 'gone']);
  const goneCall = fake.last('gone');
  const joined = discoverer.refresh(['gone']);
  discoverer.setNodes([nodeSpec('a')]);
  assert.equal(goneCall.signal.aborted, true);
  assert.equal(await isSettled(joined), true, 'a refresh joined to the aborted fetch must not hang');
  goneCall.settle(OK);
  await flush();
  clock.advance(INTERVAL_MS * 2);
  assert.equal(fake.callsFor('gone').length, 1);
  assert.deepEqual(
    results.filter((entry) => entry.node === 'gone'),
    [],
  );
});

test("setNodes keeps an unchanged node's fetch and cadence", async (t) => {
  const { fake, results, discoverer } = await startRig(t, ['a']);
  const call = fake.last('a');
  discoverer.setNodes([nodeSpec('a')]);
  assert.equal(fake.callsFor('a').length, 1);
  assert.equal(call.signal.aborted, false);
  call.settle(OK);
  await flush();
  assert.equal(results.length, 1);
});

test("setNodes re-polls a node whose url changed and drops the old fetch's result", async (t) => {
  const { fake, results, discoverer } = await startRig(t, ['a']);
  const old = fake.last('a');
  discoverer.setNodes([nodeSpec('a', 'http://moved:8000')]);
  assert.equal(old.signal.aborted, true);
  assert.equal(fake.last('a').url, 'http://moved:8000');
  old.settle(OK);
  await flush();
  assert.deepEqual(results, []);
});

test('setNodes re-polls a node whose api key, kind or allowed models changed, but not one whose group changed', async (t) => {
  const { fake, discoverer } = await startRig(t, ['key', 'kind', 'allowed', 'group']);
  const first = new Map(['key', 'kind', 'allowed', 'group'].map((name) => [name, fake.last(name)]));
  discoverer.setNodes([
    { ...nodeSpec('key'), apiKey: 'sk-new' },
    { ...nodeSpec('kind'), kind: 'sglang' },
    { ...nodeSpec('allowed'), allowedModels: ['llama-*'] },
    { ...nodeSpec('group'), group: 'big' },
  ]);
  for (const name of ['key', 'kind', 'allowed']) {
    assert.equal(first.get(name)?.signal.aborted, true, `${name}: the old fetch is dropped`);
    assert.equal(fake.callsFor(name).length, 2, `${name}: listed afresh at once`);
  }
  assert.equal(first.get('group')?.signal.aborted, false);
  assert.equal(fake.callsFor('group').length, 1);
});

test('nodes set before start are first polled at start', async () => {
  const fake = new FakeFetch();
  const discoverer = new Discoverer({
    clock: new ManualClock(),
    intervalMs: INTERVAL_MS,
    fetch: fake.fetch,
    onResult: () => {},
    minRefreshIntervalMs: MIN_REFRESH_MS,
  });
  discoverer.setNodes([nodeSpec('a')]);
  assert.equal(fake.calls.length, 0);
  await discoverer.start(new AbortController().signal);
  assert.equal(fake.calls.length, 1);
  await discoverer.stop();
});

test('stop aborts every in-flight fetch, cancels every timer and drops late results', async (t) => {
  const { clock, fake, results, discoverer } = await startRig(t, ['a', 'b']);
  await discoverer.stop();
  assert.ok(fake.calls.every((call) => call.signal.aborted));
  assert.equal(clock.pendingTimers(), 0);
  for (const call of fake.calls) call.settle(OK);
  await flush();
  clock.advance(INTERVAL_MS * 2);
  assert.equal(fake.calls.length, 2);
  assert.deepEqual(results, []);
  await discoverer.refresh(['a']);
  assert.equal(fake.calls.length, 2);
});

test('aborting the start signal stops the discoverer', async () => {
  const clock = new ManualClock();
  const fake = new FakeFetch();
  const discoverer = new Discoverer({
    clock,
    intervalMs: INTERVAL_MS,
    fetch: fake.fetch,
    onResult: () => {},
    minRefreshIntervalMs: MIN_REFRESH_MS,
  });
  discoverer.setNodes([nodeSpec('a')]);
  const lifetime = new AbortController();
  await discoverer.start(lifetime.signal);
  lifetime.abort();
  assert.equal(fake.last('a').signal.aborted, true);
  assert.equal(clock.pendingTimers(), 0);
});
