// A sim node announces what its stats show changing (src/sim/recorder.ts, resident-models.ts):
// tests wait on these announcements instead of polling /__sim/stats.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { ResidentModels } from '#src/sim/resident-models.ts';
import { RequestRecorder } from '#src/sim/recorder.ts';
import { resolveNodeSpec } from '#src/sim/spec.ts';

test('the recorder announces every request arriving and ending and every connection, after counting it', () => {
  const recorder = new RequestRecorder();
  const seen: number[] = [];
  const off = recorder.onChange(() => seen.push(recorder.stats().inFlight));
  recorder.connectionOpened();
  recorder.record({ method: 'POST', path: '/v1/chat/completions', query: {}, at: 0 });
  recorder.ended('completed');
  recorder.connectionClosed();
  assert.deepEqual(seen, [0, 1, 0, 0], 'each announcement sees the count it announces');
  off();
  recorder.record({ method: 'GET', path: '/v1/models', query: {}, at: 0 });
  assert.equal(seen.length, 4, 'no announcement after unsubscribing');
});

test('a router announces a load as it starts and as it ends, and the lagged end of a request', () => {
  const clock = new ManualClock();
  const node = resolveNodeSpec({
    kind: 'llamacpp-router',
    modelsMax: 1,
    loadTimeMs: 100,
    requestEndLagMs: 50,
    models: [{ id: 'a', status: 'unloaded' }],
  });
  let announced = 0;
  const models = new ResidentModels(node, clock, () => (announced += 1));
  assert.equal(models.load('a'), true);
  assert.equal(announced, 1, 'loading');
  clock.advance(100);
  assert.equal(models.status('a'), 'loaded');
  assert.equal(announced, 2, 'loaded');
  const end = models.beginRequest('a');
  end();
  const before = announced;
  clock.advance(50);
  assert.equal(models.requestsInFlight('a'), 0);
  assert.equal(announced, before + 1, "the router's count dropping is announced");
});
