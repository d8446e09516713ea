import { test } from 'node:test';
import assert from 'node:assert/strict';
import { INITIAL_PASSIVE_STATE, isEjected, observeUpstream, type UpstreamVerdict } from '#src/nodes/index.ts';

const policy = { ejectAfterFailures: 3, ejectForMs: 1000 };

function run(verdicts: readonly UpstreamVerdict[]) {
  let state = INITIAL_PASSIVE_STATE;
  for (const v of verdicts) state = observeUpstream(state, v, policy, 100);
  return state;
}

test('N failures in a row eject the node for the back-off period', () => {
  const state = run(['failure', 'failure', 'failure']);
  assert.equal(state.ejectedUntil, 1100);
  assert.equal(isEjected(state, 1099), true);
  assert.equal(isEjected(state, 1100), false);
});

test('a success in between resets the count; neutral outcomes change nothing', () => {
  assert.equal(run(['failure', 'failure', 'success', 'failure', 'failure']).ejectedUntil, undefined);
  assert.equal(run(['failure', 'neutral', 'failure', 'neutral', 'failure']).ejectedUntil, 1100);
  assert.equal(run(['failure', 'failure']).consecutiveFailures, 2);
});
