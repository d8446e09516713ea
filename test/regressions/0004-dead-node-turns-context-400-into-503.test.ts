// Issue 4 regression: any dead (or degraded, ejected, asleep…) node in the fleet turned every
// "prompt too large" answer into a 503 "try again", even when that node never listed the model or
// its context was too small anyway. Only a node that could take the prompt once it recovers may
// keep the verdict open.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyUnroutable, defaultFilters, filterCandidates, mightFitLater } from '#src/routing/index.ts';
import { node, request, snapshotOf } from '#test/fixtures/builders.ts';

const single = (name: string, models: string[], nCtx: number, health: 'healthy' | 'dead' = 'healthy') =>
  node(name, { models, health, kind: 'llamacpp', capacity: { role: 'single', host: { nCtx, slots: 4 } } });

function verdict(nodes: ReturnType<typeof single>[], promptTokens: number): string {
  const snapshot = snapshotOf(nodes);
  const req = request('m', { promptTokens });
  const { excluded } = filterCandidates(req, snapshot, defaultFilters());
  return classifyUnroutable(excluded, mightFitLater(snapshot, req));
}

test('a dead node that does not list the model leaves a too-large prompt too large', () => {
  assert.equal(verdict([single('a', ['m'], 4096), single('down', ['other'], 131072, 'dead')], 9000), 'too_large');
});

test('a dead node whose context is too small anyway leaves a too-large prompt too large', () => {
  assert.equal(verdict([single('a', ['m'], 4096), single('down', ['m'], 8192, 'dead')], 9000), 'too_large');
});

test('a dead node that could fit the prompt once it recovers keeps the answer a 503', () => {
  assert.equal(verdict([single('a', ['m'], 4096), single('down', ['m'], 16384, 'dead')], 9000), 'unavailable');
  const neverListed = node('down', { health: 'dead' });
  assert.equal(verdict([single('a', ['m'], 4096), neverListed], 9000), 'unavailable', 'an untried node may have anything');
});
