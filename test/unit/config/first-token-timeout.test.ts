// `[upstream] first_token_timeout` and a node's own `first_token_timeout`: durations, 0 = none.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '#src/config-tables.ts';

const node = (extra = ''): string => `[[nodes]]\nname = "a"\nurl = "http://127.0.0.1:1"\n${extra}\n`;

test('the default is 120 s, a node has none of its own unless it sets one', () => {
  const loaded = loadConfig(node(), {});
  assert.ok(loaded.ok);
  assert.equal(loaded.config.upstream.firstTokenTimeoutMs, 120_000);
  assert.equal(loaded.config.nodes[0]?.firstTokenTimeoutMs, undefined);
});

test('set in [upstream] and per node; "0s" turns it off', () => {
  const loaded = loadConfig(`[upstream]\nfirst_token_timeout = "45s"\n${node('first_token_timeout = "10m"')}`, {});
  assert.ok(loaded.ok);
  assert.equal(loaded.config.upstream.firstTokenTimeoutMs, 45_000);
  assert.equal(loaded.config.nodes[0]?.firstTokenTimeoutMs, 600_000);
  const off = loadConfig(`[upstream]\nfirst_token_timeout = "0s"\n${node('first_token_timeout = "0s"')}`, {});
  assert.ok(off.ok);
  assert.equal(off.config.upstream.firstTokenTimeoutMs, 0);
  assert.equal(off.config.nodes[0]?.firstTokenTimeoutMs, 0);
});

test('a bad value is an error naming the key', () => {
  for (const [toml, path] of [
    [`[upstream]\nfirst_token_timeout = 30\n${node()}`, 'upstream.first_token_timeout'],
    [`[upstream]\nfirst_token_timeout = "-1s"\n${node()}`, 'upstream.first_token_timeout'],
    [node('first_token_timeout = "soon"'), 'nodes[0].first_token_timeout'],
  ] as const) {
    const result = loadConfig(toml, {});
    assert.ok(!result.ok, toml);
    assert.deepEqual(
      result.problems.map((p) => p.path),
      [path],
      toml,
    );
  }
});
