import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadOutcomeOf } from '#src/proxy/failover/load-outcome.ts';

test('what an attempt that loads its model says about the load', () => {
  assert.equal(loadOutcomeOf({ kind: 'delivered', status: 200, firstByteMs: 1 }), 'loaded');
  assert.equal(
    loadOutcomeOf({ kind: 'refused', status: 400, error: 'x', refusal: { kind: 'model_not_found', message: 'x' } }),
    'loaded',
  );
  assert.equal(loadOutcomeOf({ kind: 'delivered', status: 500, firstByteMs: 1 }), 'failed', 'a 500 "failed to load"');
  assert.equal(loadOutcomeOf({ kind: 'failed', result: 'load_timeout', error: 'x' }), 'timed_out');
  assert.equal(loadOutcomeOf({ kind: 'failed', result: 'connect_error', error: 'x' }), 'failed');
  assert.equal(loadOutcomeOf({ kind: 'client_gone', status: undefined }), 'failed');
  assert.equal(loadOutcomeOf({ kind: 'client_gone', status: 200 }), 'loaded');
  // A head came, then the answer failed (no first token in time, a body that broke off): the model is up.
  assert.equal(loadOutcomeOf({ kind: 'failed', result: 'timeout', error: 'no first token', status: 200 }), 'loaded');
  assert.equal(loadOutcomeOf({ kind: 'failed', result: 'http_5xx', error: 'x', status: 503 }), 'failed');
});
