// The loop with fake sources and targets: each target's outcome is known without sending
// (`unsendable`), so the order, the release and the verdicts are seen without a socket.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { ManualClock } from '#src/core/clock.ts';
import { HeldBytesBudget } from '#src/proxy/attempt/held-answer.ts';
import type { AttemptOutcome } from '#src/proxy/attempt/attempt-outcome.ts';
import {
  mayFailOver,
  runFailover,
  type AttemptSetting,
  type NextTarget,
  type TargetSource,
} from '#src/proxy/failover/failover-loop.ts';
import { judgeSiteAttempt, startFailover, type FailoverState } from '#src/proxy/failover/attempt-feedback.ts';
import { failureLine, type AttemptVerdict, type Target, type TargetId, type TargetFailure } from '#src/proxy/failover/target.ts';
import { request } from '#test/fixtures/builders.ts';

interface Log {
  readonly lines: string[];
}

const failedOver = (target: TargetId, detail: string): AttemptVerdict => ({
  next: 'fail_over',
  failure: { target, code: 'failed', detail },
});

function fakeTarget(
  log: Log,
  id: TargetId,
  outcome: AttemptOutcome,
  conclude?: (outcome: AttemptOutcome) => AttemptVerdict,
): Target {
  const label = id.kind === 'node' ? id.name : `site:${id.id}`;
  return {
    id,
    label,
    prepare: () => {
      log.lines.push(`prepare ${label}`);
      return Promise.resolve({ kind: 'unsendable', outcome });
    },
    canFailOver: () => true,
    release: () => log.lines.push(`release ${label}`),
    conclude: (o) => {
      log.lines.push(`conclude ${label}`);
      if (conclude !== undefined) return conclude(o);
      return o.kind === 'failed' ? failedOver(id, o.error) : { next: 'answered', status: 200, figures: {} };
    },
  };
}

/** Hands out its targets in order, then says none; records the state it was asked with. */
function source(
  targets: readonly Target[],
  none: Omit<Extract<NextTarget, { kind: 'none' }>, 'kind'> = { stop: false },
): TargetSource & { asked: FailoverState[] } {
  const queue = [...targets];
  const asked: FailoverState[] = [];
  return {
    asked,
    next: (state) => {
      asked.push(state);
      const target = queue.shift();
      return Promise.resolve(target === undefined ? { kind: 'none', ...none } : { kind: 'target', target });
    },
  };
}

function setting(log: Log): AttemptSetting & { finished: unknown[] } {
  const finished: unknown[] = [];
  return {
    finished,
    res: new ServerResponse(new IncomingMessage(new Socket())),
    body: Buffer.from('{}'),
    startedMs: 0,
    totalTimeoutMs: 0,
    clock: new ManualClock(),
    maxHeldBodyBytes: 1024,
    heldBudget: new HeldBytesBudget(1024),
    finish: (node, status, extra) => finished.push([node, status, extra]),
    onAttempt: (target) => log.lines.push(`attempt ${target.label}`),
  };
}

const down: AttemptOutcome = { kind: 'failed', result: 'connect_error', error: 'ECONNREFUSED' };
const ok: AttemptOutcome = {
  kind: 'delivered',
  status: 200,
  firstByteMs: 4,
  usage: { promptTokens: 3, completionTokens: 2, counted: 'usage' },
};
const a: TargetId = { kind: 'node', name: 'a' };
const b: TargetId = { kind: 'node', name: 'b' };
const eu: TargetId = { kind: 'site', id: 'eu' };
const us: TargetId = { kind: 'site', id: 'us' };

test('local targets are tried first, then sites; each is released, then concluded, once', async () => {
  const log: Log = { lines: [] };
  const nodes = source([fakeTarget(log, a, down), fakeTarget(log, b, down)]);
  const sites = source([
    fakeTarget(log, eu, down, (o) => judgeSiteAttempt('eu', o).verdict),
    fakeTarget(log, us, ok, (o) => judgeSiteAttempt('us', o).verdict),
  ]);
  const s = setting(log);
  const end = await runFailover([nodes, sites], s, startFailover(request('m')));
  assert.deepEqual(end, { kind: 'answered' });
  const order = ['a', 'b', 'site:eu', 'site:us'].flatMap((l) => [
    `attempt ${l}`,
    `prepare ${l}`,
    `release ${l}`,
    `conclude ${l}`,
  ]);
  assert.deepEqual(log.lines, order);
  assert.deepEqual(
    s.finished,
    [['site:us', 200, { firstByteMs: 4, usage: { promptTokens: 3, completionTokens: 2, counted: 'usage' } }]],
    'the report names the target that answered, with what its answer used',
  );
  // Each source is asked with what the attempts before taught: the sites see both nodes tried.
  assert.deepEqual(
    sites.asked.map((st) => [...st.triedSites]),
    [[], ['eu']],
  );
  assert.deepEqual(
    sites.asked.map((st) => st.failures.map(failureLine)),
    [
      ['a: ECONNREFUSED', 'b: ECONNREFUSED'],
      ['a: ECONNREFUSED', 'b: ECONNREFUSED', 'site:eu: ECONNREFUSED'],
    ],
  );
});

test('when no target serves, the state lists every failure, in order', async () => {
  const log: Log = { lines: [] };
  const notSent: TargetFailure = { target: us, code: 'not_tried', detail: "not tried, this site's key is not loaded yet" };
  const end = await runFailover(
    [source([fakeTarget(log, a, down)]), source([fakeTarget(log, eu, down)], { stop: false, failure: notSent })],
    setting(log),
    startFailover(request('m')),
  );
  assert.equal(end.kind, 'unserved');
  if (end.kind !== 'unserved') return;
  assert.deepEqual(end.state.failures.map(failureLine), [
    'a: ECONNREFUSED',
    'site:eu: ECONNREFUSED',
    "site:us: not tried, this site's key is not loaded yet",
  ]);
  assert.deepEqual([...end.state.routeRequest.triedNodes], ['a']);
});

test('a source that stops (the client left) ends the loop before the later sources', async () => {
  const log: Log = { lines: [] };
  const sites = source([fakeTarget(log, eu, ok)]);
  const end = await runFailover([source([], { stop: true }), sites], setting(log), startFailover(request('m')));
  assert.equal(end.kind, 'unserved');
  assert.equal(sites.asked.length, 0, 'no site is asked for a client that left');
});

test('a target is released even when preparing its call throws', async () => {
  const log: Log = { lines: [] };
  const target: Target = { ...fakeTarget(log, a, down), prepare: () => Promise.reject(new Error('signing failed')) };
  await assert.rejects(runFailover([source([target])], setting(log), startFailover(request('m'))), /signing failed/);
  assert.deepEqual(log.lines, ['attempt a', 'release a']);
});

test('a 5xx is failed over from when a sibling remains, or a later source may serve (the sites after the nodes)', () => {
  const state = startFailover(request('m'));
  const none: TargetSource = { next: () => Promise.resolve({ kind: 'none', stop: false }) };
  const serving = (answer: boolean): TargetSource => ({ next: none.next, mayServe: () => answer });
  const target = (sibling: boolean): Pick<Target, 'canFailOver'> => ({ canFailOver: () => sibling });
  const rows: readonly [string, boolean, readonly TargetSource[], boolean][] = [
    ['a sibling node remains', true, [], true],
    ['no sibling, no later source', false, [], false],
    ['no sibling, a later source that is never asked', false, [none], false],
    ['no sibling, a later source with no site for it', false, [serving(false)], false],
    ['no sibling, a later source that may serve', false, [serving(false), serving(true)], true],
  ];
  for (const [what, sibling, later, expected] of rows) assert.equal(mayFailOver(target(sibling), later, state), expected, what);
});
