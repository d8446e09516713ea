// A worker's admissions: one message to the owner per admit, its answer turned into the same
// Admission the in-thread scheduler gives, and the lease and load returned by message, once each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeView } from '#src/nodes/index.ts';
import type { RouteRequest } from '#src/routing/index.ts';
import type { QueueSettings } from '#src/scheduler/index.ts';
import { RemoteAdmission } from '#src/workers/remote-admission.ts';
import { ViewMirror } from '#src/workers/view-mirror.ts';
import type { WorkerMessage } from '#src/workers/protocol.ts';
import { request } from '#test/fixtures/builders.ts';

const SETTINGS = {
  queueTimeoutMs: 1_000,
  maxQueue: 10,
  missWaitMs: 0,
  swapAfterMs: 0,
  loadTimeoutMs: 5_000,
  catalog: 'not sent',
} as unknown as QueueSettings;
const REQ: RouteRequest = request('m', { promptTokens: 10, maxTokens: 5, completionReserveTokens: 0 });
const VIEW = { spec: { name: 'n1' } } as unknown as NodeView;

function setup() {
  const sent: WorkerMessage[] = [];
  const mirror = new ViewMirror({ views: [VIEW], connectionLimit: undefined, rooms: [] }, () => 0);
  return { sent, remote: new RemoteAdmission((m) => sent.push(m), mirror) };
}

test('admit sends the request and only the waiting limits of its settings', () => {
  const { sent, remote } = setup();
  void remote.admit(REQ, SETTINGS, new AbortController().signal, true);
  assert.deepEqual(sent, [
    {
      t: 'admit',
      id: 1,
      req: REQ,
      firstAttempt: true,
      settings: { queueTimeoutMs: 1_000, maxQueue: 10, missWaitMs: 0, swapAfterMs: 0, loadTimeoutMs: 5_000 },
    },
  ]);
});

test('an admitted answer gives the mirrored node; release and settle are sent once each', async () => {
  const { sent, remote } = setup();
  const admission = remote.admit(REQ, SETTINGS, new AbortController().signal, true);
  remote.decided({ t: 'admitted', id: 1, node: 'n1', route: { policy: 'p', reason: 'r' }, waitedMs: 4, loadTimeoutMs: 900 });
  const a = await admission;
  assert.equal(a.kind, 'admitted');
  if (a.kind !== 'admitted') return;
  assert.equal(a.node, VIEW);
  assert.equal(a.waitedMs, 4);
  assert.equal(a.load?.timeoutMs, 900);
  a.release();
  a.release();
  a.load?.settle('loaded');
  a.load?.settle('failed');
  assert.deepEqual(sent.slice(1), [
    { t: 'release', id: 1 },
    { t: 'settle', id: 1, outcome: 'loaded' },
  ]);
  assert.equal(remote.pending(), 0);
});

test('a refusal keeps its reason; a client that leaves while waiting sends one abort', async () => {
  const { sent, remote } = setup();
  const leaving = new AbortController();
  const admission = remote.admit(REQ, SETTINGS, leaving.signal, true);
  leaving.abort();
  assert.deepEqual(sent[1], { t: 'abort', id: 1 });
  remote.decided({ t: 'refused', id: 1, reason: 'aborted', excluded: [], waitedMs: 2 });
  assert.deepEqual(await admission, { kind: 'refused', reason: 'aborted', excluded: [], waitedMs: 2 });
  assert.equal(sent.length, 2);
});

test('an admission for a node the mirror no longer has is given back and refused with a reason', async () => {
  const { sent, remote } = setup();
  const admission = remote.admit(REQ, SETTINGS, new AbortController().signal, true);
  remote.decided({
    t: 'admitted',
    id: 1,
    node: 'gone',
    route: { policy: 'p', reason: 'r' },
    waitedMs: 0,
    loadTimeoutMs: undefined,
  });
  const a = await admission;
  assert.equal(a.kind, 'refused');
  if (a.kind === 'refused') assert.match(a.excluded[0]?.detail ?? '', /removed/);
  assert.deepEqual(sent[1], { t: 'release', id: 1 });
});

test('the tenant and queue_aging cross to the owner intact: the message survives the structured clone postMessage makes', () => {
  const { sent, remote } = setup();
  const req: RouteRequest = { ...REQ, tenant: { name: 'bulk', priority: 'batch', weight: 2.5 } };
  void remote.admit(req, { ...SETTINGS, queueAgingMs: 7_000 }, new AbortController().signal, true);
  const arrived = structuredClone(sent[0]);
  assert.ok(arrived?.t === 'admit');
  assert.deepEqual(arrived.req.tenant, { name: 'bulk', priority: 'batch', weight: 2.5 });
  assert.equal(arrived.settings.queueAgingMs, 7_000);
  assert.deepEqual(arrived.req, req);
});
