// Issue 41 item 1: a llama-server router's pushed model state (`GET /models/sse`). The gateway runs
// on a manual clock that the test never moves and polls listings every 30 s: after its first
// listings no poll can happen, so whatever it learns after that it learned from a frame. The router
// (the sim, on real time) is acted on directly, as another client or the OS would:
// - a child killed (SIGKILL) is excluded, with its reason and exit code, before a request hits it;
// - a load started by another client is routable once its `loaded` frame arrives;
// - frames too big or too fast stop the stream with a reason, and it reconnects after its back-off;
// - a stream that drops is reconnected, and what it missed is read from a fresh listing.
// A node that is not a router opens no stream.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import type { RegistryEvents } from '#src/nodes/index.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { simRouter } from '#test/fixtures/router-fleet.ts';
import { httpJson, simRequests } from '#test/fixtures/http.ts';
import { on, untilEvent } from '#test/fixtures/events.ts';

const clock = new ManualClock();
let rig: { sim: SimFleet; gw: GatewayUnderTest };
/** Every stream event and every frame the gateway read, in order. */
const seen: { kind: string; payload: unknown }[] = [];

const FLEET = `${simRouter({
  models: [
    ['model-a', 'loaded'],
    ['model-b', 'unloaded'],
    ['model-c', 'loaded'],
  ],
  modelsMax: 3,
})}
[[node]]
name = "plain"
kind = "vllm"
models = ["plain-model"]
`;

before(async () => {
  // Only the gateway's clock is manual: the sim's loads and downloads take real (short) time.
  const sim = await startSimFleet(FLEET);
  const gw = await startGateway(
    [
      '[server]',
      'listen = "127.0.0.1:0"',
      '[health]',
      'interval = "30s"',
      'timeout = "5s"',
      '[discovery]',
      'interval = "30s"',
      'timeout = "5s"',
      '[[nodes]]',
      'name = "router"',
      `url = "${sim.url('router')}"`,
      'kind = "llamacpp"',
      '[[nodes]]',
      'name = "plain"',
      `url = "${sim.url('plain')}"`,
      'kind = "vllm"',
      '',
    ].join('\n'),
    { clock },
  ).catch(async (error: unknown) => {
    await sim.close();
    throw error;
  });
  rig = { sim, gw };
  const events = rig.gw.gateway.registry.events;
  for (const kind of ['node:model-events', 'node:model-event'] as const) {
    events.on(kind, (payload: RegistryEvents[typeof kind]) => seen.push({ kind, payload }));
  }
  await untilEvent(async () => (await loaded()).includes('model-a'), [on(events, 'node:discovery')], 'model-a listed loaded');
});

after(async () => {
  await rig?.gw.close();
  await rig?.sim.close();
});

interface HostRow {
  readonly name: string;
  readonly loaded: readonly string[];
  readonly available_on_demand: readonly { id: string; status: string }[];
}

async function host(name = 'router'): Promise<HostRow> {
  const hosts = (await httpJson('GET', `${rig.gw.url}/admin/hosts`)).json<{ hosts: HostRow[] }>();
  const found = hosts.hosts.find((h) => h.name === name);
  assert.ok(found, `host ${name} in /admin/hosts`);
  return found;
}

const loaded = async (): Promise<readonly string[]> => (await host()).loaded;

function opens(): number {
  return seen.filter(
    (s) =>
      s.kind === 'node:model-events' &&
      (s.payload as RegistryEvents['node:model-events']).open &&
      !('badFrame' in (s.payload as object) && (s.payload as RegistryEvents['node:model-events']).badFrame !== undefined),
  ).length;
}

function untilOpened(count: number, what: string): Promise<void> {
  return untilEvent(() => opens() >= count, [on(rig.gw.gateway.registry.events, 'node:model-events')], what);
}

async function listingsAsked(): Promise<number> {
  return (await simRequests(rig.sim.url('router'))).filter((r) => r.method === 'GET' && r.path === '/v1/models').length;
}

async function control(action: string, body: Record<string, unknown>): Promise<void> {
  const answer = await httpJson('POST', `${rig.sim.url('router')}/__sim/model`, { action, ...body });
  assert.equal(answer.status, 200, answer.text);
}

function frameApplied(model: string, status: string): Promise<void> {
  return untilEvent(
    () =>
      seen.some((s) => {
        if (s.kind !== 'node:model-event') return false;
        const p = s.payload as RegistryEvents['node:model-event'];
        return p.event.kind === 'status' && p.event.model === model && p.event.status === status && p.applied === 'models';
      }),
    [on(rig.gw.gateway.registry.events, 'node:model-event')],
    `${model} ${status} pushed and applied`,
  );
}

test('only the router opens a stream; the vLLM node (not a router) opens none', async () => {
  await untilOpened(1, 'the router stream opened');
  const asked = (await simRequests(rig.sim.url('plain'))).filter((r) => r.path.includes('sse'));
  assert.deepEqual(asked, []);
  assert.deepEqual(
    [...new Set(seen.filter((s) => s.kind === 'node:model-events').map((s) => (s.payload as { node: string }).node))],
    ['router'],
  );
});

test('a child killed is excluded with its reason and exit code from the frame alone, no listing poll', async () => {
  await untilOpened(1, 'the router stream opened');
  const clockBefore = clock.now();
  const listingsBefore = await listingsAsked();
  await control('crash', { model: 'model-a' });
  await frameApplied('model-a', 'failed');
  const explained = (await httpJson('GET', `${rig.gw.url}/admin/explain?model=model-a`)).json<{
    nodes: { node: string; reason: string; detail: string }[];
  }>();
  const verdict = explained.nodes.find((n) => n.node === 'router');
  assert.equal(verdict?.reason, 'model_failed', JSON.stringify(explained));
  assert.match(verdict?.detail ?? '', /exited with code 1 \(failed\)/);
  const answer = await httpJson('POST', `${rig.gw.url}/v1/chat/completions`, {
    model: 'model-a',
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 2,
  });
  assert.equal(answer.status, 503, answer.text);
  assert.match(answer.text, /model_failed/);
  const sent = (await simRequests(rig.sim.url('router'))).filter((r) => r.path === '/v1/chat/completions');
  assert.deepEqual(sent, [], 'no request reached the failed child');
  // Shown in /admin/hosts with its exit code and why it is not routed.
  const row = (await host()).available_on_demand.find((m) => m.id === 'model-a') as Record<string, unknown> | undefined;
  assert.equal(row?.['status'], 'failed');
  assert.equal(row?.['exit_code'], 1);
  assert.match(String(row?.['held']), /exited with code 1/);
  // Event to exclusion: 0 ms of the gateway's clock (it never moved) and no listing asked.
  assert.equal(clock.now() - clockBefore, 0);
  assert.equal(await listingsAsked(), listingsBefore, 'no listing was asked between the kill and the exclusion');
});

test('a load started by another client is routable from its loaded frame, no listing poll', async () => {
  const listingsBefore = await listingsAsked();
  assert.deepEqual(
    (await host()).available_on_demand.find((m) => m.id === 'model-b'),
    { id: 'model-b', status: 'unloaded' },
  );
  const loadedByOther = await httpJson('POST', `${rig.sim.url('router')}/models/load`, { model: 'model-b' });
  assert.equal(loadedByOther.status, 200, loadedByOther.text);
  await frameApplied('model-b', 'loaded');
  assert.ok((await loaded()).includes('model-b'), 'listed loaded in /admin/hosts');
  const answer = await httpJson('POST', `${rig.gw.url}/v1/chat/completions`, {
    model: 'model-b',
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 2,
  });
  assert.equal(answer.status, 200, answer.text);
  const loadsByGateway = (await simRequests(rig.sim.url('router'))).filter((r) => r.path === '/models/load');
  assert.equal(loadsByGateway.length, 1, 'the only load is the other client’s');
  assert.equal(await listingsAsked(), listingsBefore, 'no listing was asked between the load and the route');
});

test('a sleeping model stays routable (and counts against max_instances)', async () => {
  await control('sleep', { model: 'model-c' });
  await frameApplied('model-c', 'sleeping');
  assert.deepEqual(
    (await host()).available_on_demand.find((m) => m.id === 'model-c'),
    { id: 'model-c', status: 'sleeping' },
  );
  const answer = await httpJson('POST', `${rig.gw.url}/v1/chat/completions`, {
    model: 'model-c',
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 2,
  });
  assert.equal(answer.status, 200, answer.text);
});

function stopsWith(reason: string): number {
  return seen.filter(
    (s) => s.kind === 'node:model-events' && (s.payload as RegistryEvents['node:model-events']).stop?.reason === reason,
  ).length;
}

test('a stream that drops is reconnected after its back-off, and a fresh listing reads what it missed', async () => {
  const opened = opens();
  const listingsBefore = await listingsAsked();
  await control('drop', {});
  await untilEvent(
    () => stopsWith('ended') >= 1,
    [on(rig.gw.gateway.registry.events, 'node:model-events')],
    'the stream end seen',
  );
  const stop = seen.findLast((s) => (s.payload as RegistryEvents['node:model-events']).stop?.reason === 'ended')
    ?.payload as RegistryEvents['node:model-events'];
  assert.equal(stop.stop?.retryInMs, 1_000, 'the first back-off');
  // The back-off runs on the gateway's clock: nothing reconnects until it passes.
  assert.equal(opens(), opened);
  clock.advance(1_000);
  await untilOpened(opened + 1, 'the stream reopened');
  await untilEvent(
    async () => (await listingsAsked()) > listingsBefore,
    [on(rig.gw.gateway.registry.events, 'node:discovery')],
    'a fresh listing after the reconnect',
  );
});

test('frames too fast stop the stream with a reason (the poll tells meanwhile), then it reconnects', async () => {
  const opened = opens();
  await control('flood', { model: 'model-b', count: 1_000 });
  await untilEvent(() => stopsWith('too_fast') >= 1, [on(rig.gw.gateway.registry.events, 'node:model-events')], 'too fast seen');
  const stop = seen.findLast((s) => (s.payload as RegistryEvents['node:model-events']).stop?.reason === 'too_fast')
    ?.payload as RegistryEvents['node:model-events'];
  assert.match(stop.stop?.detail ?? '', /more than 200 frames at once or 50 a second/);
  clock.advance(stop.stop?.retryInMs ?? 0);
  await untilOpened(opened + 1, 'the stream reopened after too_fast');
});

test('a frame too big stops the stream with a reason, then it reconnects', async () => {
  const opened = opens();
  await control('oversize', { model: 'model-b', bytes: 1024 * 1024 });
  await untilEvent(
    () => stopsWith('frame_too_large') >= 1,
    [on(rig.gw.gateway.registry.events, 'node:model-events')],
    'too large seen',
  );
  const stop = seen.findLast((s) => (s.payload as RegistryEvents['node:model-events']).stop?.reason === 'frame_too_large')
    ?.payload as RegistryEvents['node:model-events'];
  assert.match(stop.stop?.detail ?? '', /exceeds the limit of 262144 bytes/);
  clock.advance(stop.stop?.retryInMs ?? 0);
  await untilOpened(opened + 1, 'the stream reopened after frame_too_large');
});
