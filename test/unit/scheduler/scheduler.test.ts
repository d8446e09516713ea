// The scheduler's waiting rules, driven by events against a recording fake fleet and a ManualClock:
// no processes, no sockets, no real sleeps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ask, describe, oneSlotNode, rig, settle } from './fake-fleet.ts';

test('a request with room is admitted at once, its lease claimed in the same tick, and released once', async () => {
  const r = rig([oneSlotNode('a', ['m'])]);
  const first = ask(r, 'm');
  assert.deepEqual(r.calls, ['claim a/m'], 'claimed before admit returns');
  const admission = await first.promise;
  assert.equal(describe(admission), 'admitted a after 0ms');
  assert.ok(admission.kind === 'admitted');
  admission.release();
  admission.release();
  assert.equal(describe(await ask(r, 'm').promise), 'admitted a after 0ms', 'the slot came back exactly once');
});

test('busy requests wait in FIFO order and each returned lease lets exactly the next one in', async () => {
  const r = rig([oneSlotNode('a', ['m'])]);
  const holder = await ask(r, 'm').promise;
  const second = ask(r, 'm');
  const third = ask(r, 'm');
  await settle();
  assert.deepEqual([describe(second.outcome()), describe(third.outcome())], ['waiting', 'waiting']);
  assert.deepEqual(r.scheduler.queueDepths(), { m: 2 });

  r.clock.advance(100);
  assert.ok(holder.kind === 'admitted');
  holder.release();
  await settle();
  assert.deepEqual([describe(second.outcome()), describe(third.outcome())], ['admitted a after 100ms', 'waiting']);

  r.clock.advance(50);
  r.leases[1]?.release();
  await settle();
  assert.equal(describe(third.outcome()), 'admitted a after 150ms');
  assert.deepEqual(r.scheduler.queueDepths(), {});
});

test('a newcomer queues behind the requests already waiting, even when a fleet change opens no room', async () => {
  const r = rig([oneSlotNode('a', ['m'])]);
  await ask(r, 'm').promise;
  const waiting = ask(r, 'm');
  const newcomer = ask(r, 'm');
  r.scheduler.fleetChanged();
  await settle();
  assert.deepEqual([describe(waiting.outcome()), describe(newcomer.outcome())], ['waiting', 'waiting']);
  assert.deepEqual(r.calls, ['claim a/m'], 'nothing else was claimed');
});

test('queue_full: past max_queue waiting requests the next one is refused at once', async () => {
  const r = rig([oneSlotNode('a', ['m'])]);
  await ask(r, 'm').promise;
  ask(r, 'm', { settings: { maxQueue: 1 } });
  const refused = await ask(r, 'm', { settings: { maxQueue: 1 } }).promise;
  assert.equal(describe(refused), 'queue_full after 0ms');
});

test('queue_timeout: a waiting request is refused at its own deadline, measured from when it queued', async () => {
  const r = rig([oneSlotNode('a', ['m'])]);
  await ask(r, 'm').promise;
  const waiting = ask(r, 'm');
  r.clock.advance(999);
  await settle();
  assert.equal(describe(waiting.outcome()), 'waiting');
  r.clock.advance(1);
  assert.equal(describe(await waiting.promise), 'queue_timeout after 1000ms');
  assert.deepEqual(r.scheduler.queueDepths(), {});
});

test('a zero queue timeout refuses at once instead of waiting', async () => {
  const r = rig([oneSlotNode('a', ['m'])]);
  await ask(r, 'm').promise;
  assert.equal(describe(await ask(r, 'm', { settings: { queueTimeoutMs: 0 } }).promise), 'queue_timeout after 0ms');
});

test('a client that leaves while waiting is refused as aborted, leaves the queue and its timer', async () => {
  const r = rig([oneSlotNode('a', ['m'])]);
  await ask(r, 'm').promise;
  const controller = new AbortController();
  const waiting = ask(r, 'm', { signal: controller.signal });
  r.clock.advance(30);
  controller.abort();
  assert.equal(describe(await waiting.promise), 'aborted after 30ms');
  assert.deepEqual(r.scheduler.queueDepths(), {});
  assert.equal(r.clock.pendingTimers(), 0, 'the deadline timer is cancelled');
  const gone = new AbortController();
  gone.abort();
  assert.equal(describe(await ask(r, 'm', { signal: gone.signal }).promise), 'aborted after 0ms', 'already gone: never queued');
});

test('queues are per model: a lease of one model lets only that model in, a freed connection lets every model try', async () => {
  const r = rig([oneSlotNode('a', ['m', 'n'])]);
  await ask(r, 'm').promise;
  await ask(r, 'n').promise;
  const m = ask(r, 'm');
  const n = ask(r, 'n');
  r.leases[1]?.release();
  await settle();
  assert.deepEqual([describe(m.outcome()), describe(n.outcome())], ['waiting', 'admitted a after 0ms']);
  r.scheduler.leaseReturned({ node: 'a', model: 'n', connectionFreed: false });
  await settle();
  assert.equal(describe(m.outcome()), 'waiting', 'a lease of another model leaves m waiting');
  r.leases[0]?.release();
  await settle();
  assert.equal(describe(m.outcome()), 'admitted a after 0ms');
});

test('wake-then-serve: an asleep node that could serve is woken once, and the held requests are served when it answers', async () => {
  const asleep = oneSlotNode('a', ['m'], { health: 'asleep' });
  const r = rig([asleep]);
  const held = ask(r, 'm');
  // Routing found nothing: the request first asks whether a re-listing could help (it cannot).
  await settle();
  assert.deepEqual(r.calls, ['wake a (request for m)']);
  r.setNodes([{ ...asleep, wake: { lastSentAt: r.clock.now(), wakingUntil: r.clock.now() + 60_000 } }]);
  const behind = ask(r, 'm');
  assert.deepEqual(r.calls, ['wake a (request for m)'], 'the second request waits behind the first and sends no wake');
  r.clock.advance(500);
  r.setNodes([oneSlotNode('a', ['m'])]);
  r.scheduler.fleetChanged();
  await settle();
  assert.deepEqual(
    [describe(held.outcome()), describe(behind.outcome())],
    ['admitted a after 500ms', 'waiting'],
    'one slot: the second waits for it',
  );
  r.leases[0]?.release();
  await settle();
  assert.equal(describe(behind.outcome()), 'admitted a after 500ms');
});

test('a node already waking is reused: no second wake is sent', async () => {
  const r = rig([
    { ...oneSlotNode('a', ['m'], { health: 'asleep' }), wake: { lastSentAt: 1, wakingUntil: Number.MAX_SAFE_INTEGER } },
  ]);
  const held = ask(r, 'm');
  await settle();
  assert.equal(describe(held.outcome()), 'waiting');
  assert.deepEqual(r.calls, []);
});

test('wake_timeout: a node that does not come back in its wake timeout leaves the held request a wake_timeout', async () => {
  const r = rig([oneSlotNode('a', ['m'], { health: 'asleep' })]);
  const held = ask(r, 'm');
  await settle();
  r.clock.advance(119_999);
  await settle();
  assert.equal(describe(held.outcome()), 'waiting');
  r.clock.advance(1);
  const refused = await held.promise;
  assert.equal(describe(refused), 'wake_timeout after 120000ms');
  assert.deepEqual(refused.kind === 'refused' && refused.excluded.map((e) => e.code), ['asleep']);
});

test('a model no asleep node could serve wakes nothing and is answered at once', async () => {
  const r = rig([oneSlotNode('a', ['other'], { health: 'asleep' })]);
  assert.equal(describe(await ask(r, 'm').promise), 'unavailable after 0ms');
  assert.deepEqual(r.calls, [], 'an asleep node is not re-listed either');
});

test('refresh-on-miss: an unknown model re-lists the nodes that could change the answer and routes again when they answer', async () => {
  const r = rig([oneSlotNode('a', ['old'])]);
  const waiting = ask(r, 'new');
  assert.deepEqual(r.calls, ['refresh a']);
  r.setNodes([oneSlotNode('a', ['old', 'new'])]);
  r.settleRefresh();
  assert.equal(describe(await waiting.promise), 'admitted a after 0ms');
  assert.equal(r.clock.pendingTimers(), 0, 'the miss-wait timer is cancelled');
});

test('refresh-on-miss waits at most miss_wait, then answers from what routing knows', async () => {
  const r = rig([oneSlotNode('a', ['old'])]);
  const waiting = ask(r, 'new');
  r.clock.advance(499);
  await settle();
  assert.equal(describe(waiting.outcome()), 'waiting');
  r.clock.advance(1);
  assert.equal(describe(await waiting.promise), 'unavailable after 0ms');
});

test('refresh-on-miss is limited: first attempts only, only nodes worth re-listing, and no wait with miss_wait 0', async () => {
  const cases: { name: string; firstAttempt: boolean; missWaitMs: number; nodes: Parameters<typeof rig>[0]; calls: string[] }[] =
    [
      { name: 'failover attempt', firstAttempt: false, missWaitMs: 500, nodes: [oneSlotNode('a', ['old'])], calls: [] },
      {
        name: 'no listing could change',
        firstAttempt: true,
        missWaitMs: 500,
        nodes: [oneSlotNode('a', ['new'], { health: 'dead' })],
        calls: [],
      },
      { name: 'miss_wait 0', firstAttempt: true, missWaitMs: 0, nodes: [oneSlotNode('a', ['old'])], calls: ['refresh a'] },
    ];
  for (const c of cases) {
    const r = rig(c.nodes);
    const outcome = await ask(r, 'new', { firstAttempt: c.firstAttempt, settings: { missWaitMs: c.missWaitMs } }).promise;
    assert.equal(describe(outcome), 'unavailable after 0ms', c.name);
    assert.deepEqual(r.calls, c.calls, c.name);
    assert.equal(r.clock.pendingTimers(), 0, c.name);
  }
});

test('a failed refresh is reported and the request goes on', async () => {
  const r = rig([oneSlotNode('a', ['old'])]);
  const waiting = ask(r, 'new');
  r.settleRefresh(false);
  assert.equal(describe(await waiting.promise), 'unavailable after 0ms');
  assert.deepEqual(
    r.notices.map((n) => n.kind),
    ['decided', 'refresh-failed'],
  );
});

test('the first routing decision of a request is reported; failovers and queued newcomers are not', async () => {
  // Node b does not serve m: every decision for m excludes it, so each has something to report.
  const r = rig([oneSlotNode('a', ['m']), oneSlotNode('b', ['other'])]);
  await ask(r, 'm').promise;
  await ask(r, 'm', { firstAttempt: false, settings: { queueTimeoutMs: 0 } }).promise;
  ask(r, 'm');
  ask(r, 'm');
  assert.deepEqual(
    r.notices.map((n) => n.kind === 'decided' && n.decision.kind),
    ['selected', 'unroutable'],
  );
});

test('a decision that excluded no node is not reported: the notice would carry nothing', async () => {
  const r = rig([oneSlotNode('a', ['m'])]);
  assert.equal(describe(await ask(r, 'm').promise), 'admitted a after 0ms');
  assert.deepEqual(r.notices, []);
});

test('a prompt too large for every node is refused at once, not queued', async () => {
  const r = rig([oneSlotNode('a', ['m'])]);
  const tooLarge = await r.scheduler.admit(
    {
      model: 'm',
      group: undefined,
      triedNodes: new Set(),
      promptTokens: 10_000,
      maxTokens: undefined,
      completionReserveTokens: 0,
      loadOnDemand: true,
      policy: 'least-in-flight' as const,
    },
    { queueTimeoutMs: 1_000, maxQueue: 10, missWaitMs: 0, swapAfterMs: 0, loadTimeoutMs: 1_000 },
    new AbortController().signal,
    true,
  );
  assert.equal(describe(tooLarge), 'too_large after 0ms');
});

test('hasAlternative counts busy nodes but not tried ones', async () => {
  const r = rig([oneSlotNode('a', ['m']), oneSlotNode('b', ['m'])]);
  await ask(r, 'm').promise;
  await ask(r, 'm').promise;
  const req = {
    model: 'm',
    group: undefined,
    promptTokens: undefined,
    maxTokens: undefined,
    completionReserveTokens: 0,
    loadOnDemand: true,
    policy: 'least-in-flight' as const,
  };
  assert.equal(r.scheduler.hasAlternative({ ...req, triedNodes: new Set(['a']) }), true, 'b is busy, still worth it');
  assert.equal(r.scheduler.hasAlternative({ ...req, triedNodes: new Set(['a', 'b']) }), false);
});

test('a request for a model running on a node with room is admitted on one fleet snapshot (no load to plan)', async () => {
  const r = rig([oneSlotNode('a', ['m'])]);
  const admission = await ask(r, 'm').promise;
  assert.equal(describe(admission), 'admitted a after 0ms');
  assert.equal(r.snapshots(), 1, 'the wait, the decision and the claim read one snapshot');
});
