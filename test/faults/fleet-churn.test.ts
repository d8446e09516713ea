// A fleet that changes under load: one node flapping every second, and every node down at once,
// then back. Clients see no avoidable error (a capable node was up and the gateway had had one
// health round to see it), only 503s while nothing can serve, and full service afterwards.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertNoLeaks, Availability, FaultBed, FigureTable, pause, runCase, simNode, summary } from '#test/faults/harness.ts';
import { simRequests } from '#test/fixtures/http.ts';

const CONCURRENCY = 10;
/** Health probes run every 200 ms; one success revives a dead node, one listing re-lists it. */
const NOTICE_MS = 1_200;
const table = new FigureTable('Fleet churn');
let bed: FaultBed;

before(async () => {
  bed = await FaultBed.start({
    fleet: [
      [simNode('steady', 'vllm', ['m-flap']), simNode('flappy', 'llamacpp', ['m-flap'])].join('\n\n'),
      // Its own process, so the whole fleet serving m-down can be stopped and started again.
      [simNode('down-a', 'vllm', ['m-down']), simNode('down-b', 'llamacpp', ['m-down'])].join('\n\n'),
    ],
  });
});

after(async () => {
  table.print();
  await bed?.stop();
});

test('a node flapping every second (resets and failed probes, then fine) costs clients nothing', async () => {
  let flips = 0;
  const stop = new AbortController();
  const { tally, leaks } = await runCase({
    bed,
    table,
    name: 'a node flapping every second',
    nodes: ['steady', 'flappy'],
    load: {
      requests: 3_000,
      concurrency: CONCURRENCY,
      seed: 501,
      model: 'm-flap',
      paceMs: 60,
      maxDurationMs: 20_000,
      stopSignal: stop.signal,
    },
    // Six seconds: down, up, down, up, down, up; then the load stops.
    during: async () => {
      for (; flips < 6; flips++) {
        await bed.setFaults(
          'flappy',
          flips % 2 === 0 ? { inference: 'reset', health: 'fail' } : { inference: 'none', health: 'none' },
        );
        await pause(1_000);
      }
      stop.abort();
    },
    restore: () => bed.clearFaults('flappy'),
  });
  assert.equal(tally.clientErrors, 0, summary(tally));
  // The gateway kept trying the node in its good phases (it is ejected for 2 s after 3 failures,
  // so on a busy machine it may not have served one).
  const attempts = (await simRequests(bed.nodeUrl('flappy'))).filter((r) => r.path === '/v1/chat/completions').length;
  assert.ok(attempts > 0, `the flapping node was tried: ${summary(tally)}`);
  assertNoLeaks(leaks, CONCURRENCY);
});

test('with every node down clients get 503s, and once the nodes are back every request is served', async () => {
  const availability = new Availability(NOTICE_MS);
  let downAt = 0;
  let upAt = 0;
  const stop = new AbortController();
  const { tally, leaks } = await runCase({
    bed,
    table,
    name: 'all nodes down then back',
    note: 'fleet process stopped, then restarted on the same ports',
    nodes: ['down-a', 'down-b'],
    load: {
      requests: 2_000,
      concurrency: CONCURRENCY,
      seed: 502,
      model: 'm-down',
      paceMs: 100,
      maxDurationMs: 25_000,
      stopSignal: stop.signal,
      availability,
    },
    during: async () => {
      await pause(1_500);
      availability.down();
      downAt = Date.now();
      await bed.stopFleet(1);
      await pause(1_000);
      await bed.restartFleet(1);
      upAt = Date.now();
      availability.up();
      await pause(NOTICE_MS + 2_000);
      stop.abort();
    },
  });
  assert.equal(tally.avoidable, 0, summary(tally));
  const refusals = tally.outcomes.filter((o) => o.kind === 'http_error');
  assert.ok(refusals.length > 0, `the outage was visible: ${summary(tally)}`);
  assert.ok(
    refusals.every((o) => o.status === 503 || o.status === 502),
    `only 502/503 while down: ${summary(tally)}`,
  );
  assert.equal(tally.byKind.socket_error ?? 0, 0, `the gateway answered every request: ${summary(tally)}`);
  // Full service after the nodes came back (and the gateway had a moment to notice).
  const after = tally.outcomes.filter((o) => o.startedAt > upAt + NOTICE_MS);
  assert.ok(after.length > 20, `load continued after the outage: ${after.length}`);
  assert.ok(
    after.every((o) => o.kind === 'ok'),
    `full service after: ${summary(tally)}`,
  );
  assert.ok(downAt > 0);
  assertNoLeaks(leaks, CONCURRENCY);
});
