import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '#src/config-tables.ts';
import type { RemoteSiteView } from '#src/routing/index.ts';
import { ModelNames } from '#src/metrics/model-names.ts';
import { node } from '#test/fixtures/builders.ts';

const loaded = loadConfig('[[models.available]]\nname = "declared"\n[[nodes]]\nname = "a"\nurl = "http://127.0.0.1:9"\n', {});
assert.ok(loaded.ok);
const config = loaded.config;

function site(id: string, fresh: boolean, models: readonly string[]): RemoteSiteView {
  return {
    id,
    url: `http://127.0.0.1:9/${id}`,
    fresh,
    load: 0,
    models: new Map(models.map((m) => [m, { ctx: undefined, onDemand: false }])),
  };
}

test('request labels: declared, listed and fresh-remote models keep their id; anything else is _unknown', () => {
  const views = [node('a', { models: ['listed'] })];
  const names = new ModelNames(config, { views: () => views }, () => [
    site('b', true, ['remote-only']),
    site('c', false, ['stale-only']),
  ]);
  assert.equal(names.requestLabel('declared'), 'declared');
  assert.equal(names.requestLabel('listed'), 'listed');
  assert.equal(names.requestLabel('remote-only'), 'remote-only', 'forwarded to a fresh site: labelled like a local model');
  assert.equal(names.requestLabel('stale-only'), '_unknown', 'a stale site serves nothing');
  assert.equal(names.requestLabel('made-up'), '_unknown');
});

test('request labels without a mesh: only declared and listed models', () => {
  const names = new ModelNames(config, { views: () => [node('a', { models: ['listed'] })] });
  assert.equal(names.requestLabel('listed'), 'listed');
  assert.equal(names.requestLabel('remote-only'), '_unknown');
});

test('request labels follow the listings and the remote sites as they change, however often a model was asked for', () => {
  let views = [node('a', { models: ['listed'] })];
  let fresh = true;
  const names = new ModelNames(config, { views: () => views }, () => [site('b', fresh, ['remote-only'])]);
  for (let i = 0; i < 3; i++) {
    assert.equal(names.requestLabel('listed'), 'listed');
    assert.equal(names.requestLabel('later'), '_unknown');
    assert.equal(names.requestLabel('remote-only'), 'remote-only');
  }
  views = [node('a', { models: ['later'] })];
  fresh = false;
  assert.equal(names.requestLabel('later'), 'later', 'listed now');
  assert.equal(names.requestLabel('listed'), '_unknown', 'no longer listed');
  assert.equal(names.requestLabel('remote-only'), '_unknown', 'its site went stale');
});
