import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TenantSpec } from '#src/tenants/tenants-config.ts';
import { KeyDirectory, keyTag, rotatingDirectory, sameTenants } from '#src/tenants/index.ts';
import { allowsModel } from '#src/tenants/index.ts';
import { tenantSpec } from '#test/fixtures/builders.ts';

function spec(name: string, keys: readonly string[], more: Partial<TenantSpec> = {}): TenantSpec {
  return tenantSpec(name, { keys, ...more });
}

const DIRECTORY = new KeyDirectory([spec('a', ['ka-1', 'ka-2']), spec('b', ['kb-1'], { requestsPerMinute: 10 })]);

test('a presented key names its tenant; none, unknown, a prefix or a longer key name none', () => {
  const cases: [presented: string | undefined, tenant: string | undefined][] = [
    ['ka-1', 'a'],
    ['ka-2', 'a'],
    ['kb-1', 'b'],
    [undefined, undefined],
    ['', undefined],
    ['ka-', undefined],
    ['ka-12', undefined],
    ['KA-1', undefined],
  ];
  for (const [presented, tenant] of cases) assert.equal(DIRECTORY.identify(presented)?.spec.name, tenant, String(presented));
});

test('a tenant knows whether it has limits and what its queue sees', () => {
  assert.equal(DIRECTORY.tenant('a')?.limited, false);
  assert.equal(DIRECTORY.tenant('b')?.limited, true);
  assert.deepEqual(DIRECTORY.tenant('b')?.queue, { name: 'b', priority: 'standard', weight: 1 });
  assert.equal(DIRECTORY.open, false);
  assert.equal(new KeyDirectory([]).open, true);
});

test('1,000 tenants × 100 keys: every key is found (a digest-keyed map, not a scan)', () => {
  const specs = Array.from({ length: 1_000 }, (_, t) =>
    spec(
      `t${t}`,
      Array.from({ length: 100 }, (_, k) => `key-${t}-${k}`),
    ),
  );
  const directory = new KeyDirectory(specs);
  for (const [t, k] of [
    [0, 0],
    [999, 99],
    [500, 42],
  ] as const)
    assert.equal(directory.identify(`key-${t}-${k}`)?.spec.name, `t${t}`);
  assert.equal(directory.identify('key-1000-0'), undefined);
});

test('the directory is rebuilt on reload only when the tenants changed', () => {
  let tenants: readonly TenantSpec[] = [spec('a', ['k1'])];
  const current = rotatingDirectory(() => tenants);
  const first = current();
  tenants = [spec('a', ['k1'])];
  assert.equal(current(), first, 'equal tenants: the same directory');
  tenants = [spec('a', ['k1', 'k2'])];
  const rotated = current();
  assert.notEqual(rotated, first);
  assert.equal(rotated.identify('k2')?.spec.name, 'a', 'a rotated-in key works at once');
  const changes: [string, Partial<TenantSpec>][] = [
    ['models', { models: ['x-*'] }],
    ['sites', { sites: [] }],
    ['limit', { tokensPerDay: 5 }],
    ['class', { priority: 'batch' }],
  ];
  for (const [what, change] of changes) assert.equal(sameTenants([spec('a', ['k'])], [spec('a', ['k'], change)]), false, what);
});

test('keyTag: 8 hex digits, the same for the same key, never the key', () => {
  assert.match(keyTag('secret-key'), /^[0-9a-f]{8}$/);
  assert.equal(keyTag('secret-key'), keyTag('secret-key'));
  assert.notEqual(keyTag('secret-key'), keyTag('secret-kez'));
});

test('scopes: model globs', () => {
  const cases: [models: string[], model: string, allowed: boolean][] = [
    [['*'], 'anything', true],
    [['llama-*'], 'llama-3-8b', true],
    [['llama-*'], 'qwen-7b', false],
    [['qwen-?b', 'phi'], 'qwen-7b', true],
    [['qwen-?b', 'phi'], 'phi', true],
    [['qwen-?b', 'phi'], 'phi-2', false],
  ];
  for (const [models, model, allowed] of cases)
    assert.equal(allowsModel({ models }, model), allowed, `${models.join(',')} ${model}`);
});
