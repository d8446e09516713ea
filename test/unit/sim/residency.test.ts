import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasRoom, pickEvictionVictim, pickVictim, resolveModelName, type ResidentModel } from '#src/sim/residency.ts';
import type { ModelStatus } from '#src/sim/spec.ts';

function model(id: string, status: ModelStatus, lastUsedOrder: number, aliases: string[] = []): ResidentModel {
  return { id, aliases, status, lastUsedOrder };
}

test('evicts the least recently used running model once models_max are running', () => {
  const models = [model('a', 'loaded', 5), model('b', 'sleeping', 2), model('c', 'loading', 9), model('d', 'unloaded', 1)];
  assert.equal(pickEvictionVictim(models, 3), 'b');
  assert.equal(pickEvictionVictim(models, 4), undefined);
  assert.equal(pickEvictionVictim(models, 0), undefined);
});

test('breaks last-used ties in favour of the model listed first', () => {
  assert.equal(pickEvictionVictim([model('a', 'loaded', 1), model('b', 'loaded', 1)], 2), 'a');
});

test('resolves ids before aliases and unknown names to undefined', () => {
  const models = [model('a', 'loaded', 0, ['b']), model('b', 'loaded', 0)];
  assert.equal(resolveModelName(models, 'b'), 'b');
  assert.equal(resolveModelName(models, 'a'), 'a');
  assert.equal(resolveModelName([model('x', 'loaded', 0, ['alias'])], 'alias'), 'x');
  assert.equal(resolveModelName(models, 'zzz'), undefined);
});

test('a request arriving at models_max evicts only a ready model with no request in flight (pick_victim)', () => {
  const models = [model('a', 'loaded', 1), model('b', 'sleeping', 2), model('c', 'loading', 0), model('d', 'unloaded', 0)];
  const busy = (ids: string[]) => (id: string) => (ids.includes(id) ? 1 : 0);
  assert.equal(pickVictim(models, 'd', busy([])), 'a', 'least recently used idle');
  assert.equal(pickVictim(models, 'd', busy(['a'])), 'b', 'a busy model is skipped');
  assert.equal(pickVictim(models, 'd', busy(['a', 'b'])), undefined, 'a loading model is never the victim: the request queues');
  assert.equal(pickVictim(models, 'a', busy([])), 'b', 'the model asked for is never its own victim');
  assert.equal(hasRoom(models, 4), true);
  assert.equal(hasRoom(models, 3), false);
  assert.equal(hasRoom(models, 0), true, '0 = unlimited');
});
