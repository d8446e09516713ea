// The simulated router's request_end_lag: its count of a model's requests (which keeps the model
// from being the LRU victim) drops `requestEndLagMs` after the answer ended, and unloadsMidRequest
// counts only unloads that cut an answer off (not those in the lag).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { ResidentModels } from '#src/sim/resident-models.ts';
import { resolveNodeSpec } from '#src/sim/spec.ts';

function residents(lag: number): { clock: ManualClock; models: ResidentModels } {
  const clock = new ManualClock();
  const node = resolveNodeSpec({
    kind: 'llamacpp-router',
    modelsMax: 1,
    requestEndLagMs: lag,
    models: [
      { id: 'a', status: 'loaded' },
      { id: 'b', status: 'unloaded' },
    ],
  });
  return { clock, models: new ResidentModels(node, clock) };
}

test('the router count lags the end of an answer by request_end_lag', () => {
  const { clock, models } = residents(50);
  const end = models.beginRequest('a');
  end();
  assert.equal(models.requestsInFlight('a'), 1, 'still counted by the router in the gap');
  clock.advance(50);
  assert.equal(models.requestsInFlight('a'), 0);
});

test('an unload in the gap cuts nothing off; one mid-answer does', () => {
  const { models } = residents(50);
  const end = models.beginRequest('a');
  end();
  assert.equal(models.unload('a'), true);
  assert.equal(models.stats().unloadsMidRequest, 0);
  models.load('a');
  const { models: other } = residents(0);
  other.beginRequest('a');
  other.unload('a');
  assert.equal(other.stats().unloadsMidRequest, 1);
});
