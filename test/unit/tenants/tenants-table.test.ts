import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '#src/config-tables.ts';
import { invalid, valid } from '#src/config/parse-result.ts';
import type { SecretFileReader } from '#src/config/index.ts';

const NODE = '[[nodes]]\nname = "a"\nurl = "http://127.0.0.1:8000"\n';
const files: Record<string, string> = {
  '/keys/team': '# rotated 2026-12\nkey-one\n\n  key-two  \n',
  '/keys/empty': '# nothing\n\n',
};
const readFile: SecretFileReader = (path) => (files[path] === undefined ? invalid('ENOENT') : valid(files[path]));

function load(toml: string, env: Record<string, string> = {}) {
  return loadConfig(toml + NODE, env, undefined, readFile);
}

function problems(toml: string, env: Record<string, string> = {}): string[] {
  const result = load(toml, env);
  assert.equal(result.ok, false, 'expected problems');
  return result.ok ? [] : result.problems.map((p) => `${p.path}: ${p.message}`);
}

test('a tenant gets every default; api_keys becomes the tenant "default" after the [[tenants]]', () => {
  const result = load(
    '[server]\napi_keys = ["legacy"]\n[[tenants]]\nname = "team"\nkeys = ["k1", "env:TEAM_KEY", "file:/keys/team"]\n',
    { TEAM_KEY: 'k2' },
  );
  assert.ok(result.ok, JSON.stringify(result));
  assert.deepEqual(
    result.config.tenants.map((t) => t.name),
    ['team', 'default'],
  );
  const [team, fallback] = result.config.tenants;
  assert.deepEqual(team, {
    name: 'team',
    keys: ['k1', 'k2', 'key-one', 'key-two'],
    models: ['*'],
    sites: undefined,
    priority: 'standard',
    weight: 1,
    maxConcurrent: undefined,
    requestsPerMinute: undefined,
    tokensPerMinute: undefined,
    tokensPerDay: undefined,
  });
  assert.deepEqual(fallback?.keys, ['legacy']);
  assert.equal(fallback?.maxConcurrent, undefined);
});

test('no keys anywhere: no tenants (the gateway is open)', () => {
  const result = load('');
  assert.ok(result.ok);
  assert.deepEqual(result.config.tenants, []);
  assert.equal(result.config.server.stateDir, undefined);
});

test('limits, scopes and classes are read', () => {
  const result = load(
    '[server]\nstate_dir = "/var/lib/switchyard"\n[[tenants]]\nname = "batch"\nkeys = ["b"]\nmodels = ["llama-*"]\nsites = []\npriority = "batch"\nweight = 3\nmax_concurrent = 4\nrequests_per_minute = 60\ntokens_per_minute = 10000\ntokens_per_day = 1000000\n',
  );
  assert.ok(result.ok, JSON.stringify(result));
  assert.equal(result.config.server.stateDir, '/var/lib/switchyard');
  const [tenant] = result.config.tenants;
  assert.deepEqual(tenant, {
    name: 'batch',
    keys: ['b'],
    models: ['llama-*'],
    sites: [],
    priority: 'batch',
    weight: 3,
    maxConcurrent: 4,
    requestsPerMinute: 60,
    tokensPerMinute: 10000,
    tokensPerDay: 1000000,
  });
});

const BAD: readonly (readonly [string, string, string])[] = [
  [
    'no keys',
    '[[tenants]]\nname = "t"\nkeys = []\n',
    'tenants[0].keys: must hold at least one key: a tenant without a key cannot be reached',
  ],
  [
    'unknown key',
    '[[tenants]]\nname = "t"\nkeys = ["k"]\nrpm = 3\n',
    'tenants[0].rpm: unknown key; expected one of: name, keys, models, sites, priority, weight, max_concurrent, requests_per_minute, tokens_per_minute, tokens_per_day',
  ],
  [
    'bad class',
    '[[tenants]]\nname = "t"\nkeys = ["k"]\npriority = "urgent"\n',
    'tenants[0].priority: must be one of: interactive, standard, batch',
  ],
  [
    'zero limit',
    '[[tenants]]\nname = "t"\nkeys = ["k"]\nrequests_per_minute = 0\n',
    'tenants[0].requests_per_minute: must be a whole number of at least 1',
  ],
  [
    'missing variable',
    '[[tenants]]\nname = "t"\nkeys = ["env:NOPE"]\n',
    'tenants[0].keys[0]: environment variable NOPE is not set',
  ],
  [
    'missing file',
    '[[tenants]]\nname = "t"\nkeys = ["file:/keys/none"]\n',
    'tenants[0].keys[0]: cannot read key file /keys/none: ENOENT',
  ],
  [
    'empty file',
    '[[tenants]]\nname = "t"\nkeys = ["file:/keys/empty"]\n',
    'tenants[0].keys[0]: key file /keys/empty holds no key (one per line; # starts a comment)',
  ],
  [
    'key with space',
    '[[tenants]]\nname = "t"\nkeys = ["a b"]\n',
    'tenants[0].keys[0]: the key holds whitespace; a key is one token',
  ],
  [
    'duplicate name',
    '[[tenants]]\nname = "t"\nkeys = ["k1"]\n[[tenants]]\nname = "t"\nkeys = ["k2"]\n',
    'tenants[1].name: duplicate tenant name "t" (also tenants[0])',
  ],
  [
    'shared key',
    '[[tenants]]\nname = "t"\nkeys = ["same"]\n[[tenants]]\nname = "u"\nkeys = ["same"]\n',
    'tenants[1].keys: a key of this tenant is also held by tenants[0] ("t"); each key must name one tenant',
  ],
  [
    'key of api_keys',
    '[server]\napi_keys = ["same"]\n[[tenants]]\nname = "u"\nkeys = ["same"]\n',
    'tenants[0].keys: a key of this tenant is also held by server.api_keys; each key must name one tenant',
  ],
  [
    'default taken',
    '[server]\napi_keys = ["x"]\n[[tenants]]\nname = "default"\nkeys = ["y"]\n',
    'tenants[0].name: "default" is the tenant of [server] api_keys; name this one otherwise, or move those keys here',
  ],
  [
    'site without mesh',
    '[[tenants]]\nname = "t"\nkeys = ["k"]\nsites = ["east"]\n',
    'tenants[0].sites[0]: names site "east" but [mesh] is not set',
  ],
];

for (const [what, toml, expected] of BAD) {
  test(`a bad tenant is named by its key path: ${what}`, () => {
    assert.deepEqual(problems(toml), [expected]);
  });
}

test('the key itself never appears in a problem', () => {
  const all = problems('[[tenants]]\nname = "t"\nkeys = ["sk-secret-1"]\n[[tenants]]\nname = "u"\nkeys = ["sk-secret-1"]\n').join(
    '\n',
  );
  assert.doesNotMatch(all, /sk-secret-1/);
});
