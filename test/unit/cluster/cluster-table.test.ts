// [cluster]: the store URL's checks, the password through env:, the defaults; no table = none.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from '#src/config-tables.ts';
import { parseStoreUrl } from '#src/cluster/cluster-table.ts';

const NODES = '[[nodes]]\nname = "a"\nurl = "http://127.0.0.1:9"\n';

describe('[cluster]', () => {
  test('absent: the gateway runs alone', () => {
    const loaded = loadConfig(NODES, {});
    assert.ok(loaded.ok);
    assert.equal(loaded.config.cluster, undefined);
  });

  test('the defaults: lease_ttl 10s, prefix switchyard:, the replica named at start', () => {
    const loaded = loadConfig(`${NODES}[cluster]\nstore = "redis://127.0.0.1:6379/0"\n`, {});
    assert.ok(loaded.ok, JSON.stringify(loaded));
    assert.deepEqual(loaded.config.cluster, {
      store: 'redis://127.0.0.1:6379/0',
      password: undefined,
      replica: undefined,
      leaseTtlMs: 10_000,
      prefix: 'switchyard:',
    });
  });

  test('a password from the environment, a replica name, rediss://', () => {
    const loaded = loadConfig(
      `${NODES}[cluster]\nstore = "rediss://store.internal:6380/2"\npassword = "env:STORE_PW"\nreplica = "gw-1"\nlease_ttl = "4s"\n`,
      { STORE_PW: 's3cret' },
    );
    assert.ok(loaded.ok, JSON.stringify(loaded));
    assert.equal(loaded.config.cluster?.password, 's3cret');
    assert.equal(loaded.config.cluster?.replica, 'gw-1');
    assert.equal(loaded.config.cluster?.leaseTtlMs, 4_000);
  });

  const refused: readonly (readonly [string, string])[] = [
    ['store = "http://127.0.0.1:6379"', 'must start with redis:// or rediss://'],
    ['store = "redis://:pw@127.0.0.1:6379"', 'must not carry credentials'],
    ['store = "redis://127.0.0.1:6379/zero"', 'the database after the port must be a number'],
    ['store = "not a url"', 'must be a URL'],
    ['store = "redis://127.0.0.1"\nlease_ttl = "100ms"', 'must be at least 1s'],
    ['store = "redis://127.0.0.1"\npassword = "env:MISSING"', 'environment variable MISSING is not set'],
    ['store = "redis://127.0.0.1"\nlease = "5s"', 'unknown key'],
    ['lease_ttl = "5s"', 'store'],
  ];
  for (const [body, message] of refused) {
    test(`refused: ${body.replace(/\n/g, '; ')}`, () => {
      const loaded = loadConfig(`${NODES}[cluster]\n${body}\n`, {});
      assert.ok(!loaded.ok);
      const text = loaded.problems.map((p) => `${p.path}: ${p.message}`).join('\n');
      assert.ok(text.includes(message) && text.includes('cluster'), text);
      assert.ok(!text.includes('pw@'), 'a credential is never echoed');
    });
  }

  test('parseStoreUrl keeps a good URL as written', () => {
    assert.deepEqual(parseStoreUrl('redis://10.0.0.5:6379/1'), { ok: true, value: 'redis://10.0.0.5:6379/1' });
  });
});
