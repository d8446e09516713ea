import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { parse } from 'smol-toml';
import { CONFIG_DEFAULTS } from '#src/config/defaults.ts';
import { formatProblems } from '#src/config/load.ts';
import { loadConfig } from '#src/config-tables.ts';

const repoFile = (path: string): Promise<string> => readFile(new URL(`../../../${path}`, import.meta.url), 'utf8');

/** Every key of a TOML document, tables and arrays of tables included, e.g. "nodes.api_key". */
function keyNames(value: unknown, into: Set<string> = new Set()): Set<string> {
  if (Array.isArray(value)) for (const item of value) keyNames(item, into);
  else if (typeof value === 'object' && value !== null && !(value instanceof Date)) {
    for (const [key, child] of Object.entries(value)) {
      into.add(key);
      keyNames(child, into);
    }
  }
  return into;
}

describe('examples/switchyard.toml', () => {
  test('loads without problems', async () => {
    const result = loadConfig(await repoFile('examples/switchyard.toml'), {});
    assert.ok(result.ok, result.ok ? '' : formatProblems(result.problems));
  });

  test('states the defaults for every settings section it shows', async () => {
    const result = loadConfig(await repoFile('examples/switchyard.toml'), {});
    assert.ok(result.ok);
    assert.deepEqual(result.config.server, CONFIG_DEFAULTS.server);
    assert.deepEqual(result.config.health, CONFIG_DEFAULTS.health);
    assert.deepEqual(result.config.discovery, CONFIG_DEFAULTS.discovery);
    assert.deepEqual(result.config.upstream, CONFIG_DEFAULTS.upstream);
    assert.deepEqual(result.config.load, CONFIG_DEFAULTS.load);
  });

  test('shows every key, with api_key as a commented line that still parses', async () => {
    const text = await repoFile('examples/switchyard.toml');
    const keys = keyNames(parse(text));
    const expected = [
      'server',
      'listen',
      'max_request_body_bytes',
      'health',
      'interval',
      'timeout',
      'fail_threshold',
      'discovery',
      'max_body_bytes',
      'miss_wait',
      'miss_cooldown',
      'upstream',
      'connect_timeout',
      'headers_timeout',
      'body_idle_timeout',
      'models',
      'default',
      'available',
      'name',
      'group',
      'aliases',
      'nodes',
      'url',
      'kind',
    ];
    for (const key of expected) assert.ok(keys.has(key), `example lacks ${key}`);
    const commentedKey = /^# (api_key = .*)$/m.exec(text)?.[1] ?? '';
    assert.ok(loadConfig(`[[nodes]]\nname = "a"\nurl = "http://a"\n${commentedKey}\n`, { GPU_A_KEY: 'k' }).ok);
  });
});

describe('docs/config.md', () => {
  test('documents every key the example uses, and api_key', async () => {
    const docs = await repoFile('docs/config.md');
    const keys = [...keyNames(parse(await repoFile('examples/switchyard.toml'))), 'api_key'];
    for (const key of keys)
      assert.ok(docs.includes(`\`${key}\``) || docs.includes(`[${key}]`) || docs.includes(`.${key}]]`), `docs lack ${key}`);
  });
});
