// A feature's config table (config/config-table.ts) plugs into the loader with no edit in
// src/config/: a toy feature's `[toy]` table, declared here as a feature's folder would, is parsed
// with its defaults, checked against the rest of the file, completed from it, and its restart-only
// keys are named; a table listed twice is refused where the list is built.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { configLoader, formatProblems, restartOnlyChecker, type ConfigTable, type GatewayConfig } from '#src/config/index.ts';
import { tableOf } from '#src/config/raw-document.ts';
import { table } from '#src/config/schema-parts.ts';

interface ToyConfig {
  readonly level: number;
  /** Completed from [server] api_keys: how many there are. */
  readonly keys: number;
}

declare module '#src/config/types.ts' {
  interface GatewayConfig {
    /** A test's toy feature table (config-table.test.ts); never set outside it. */
    readonly toy?: ToyConfig | undefined;
  }
}

const toyTable: ConfigTable<'toy'> = {
  name: 'toy',
  schema: () =>
    table({ level: z.int({ error: 'must be a whole number' }).default(3) })
      .transform((toy): ToyConfig => ({ level: toy.level, keys: 0 }))
      .optional(),
  complete: (toy, config) => (toy === undefined ? undefined : { ...toy, keys: config.server.apiKeys.length }),
  crossChecks: (doc) =>
    tableOf(doc['toy']) !== undefined && doc['nodes'] === undefined ? [{ path: ['toy'], message: 'needs [[nodes]]' }] : [],
  summary: (config) => [`toy: ${config.toy === undefined ? 'off' : `level ${config.toy.level}`}`],
  restartOnly: (previous, next) => (previous.toy?.level === next.toy?.level ? [] : ['toy.level']),
};

const node = '[[nodes]]\nname = "a"\nurl = "http://10.0.0.1:8000"\n';
const { loadConfig } = configLoader([toyTable]);

function loaded(text: string): GatewayConfig {
  const result = loadConfig(text, {});
  assert.ok(result.ok, result.ok ? '' : formatProblems(result.problems));
  return result.config;
}

test('a feature table is parsed with its defaults, completed from the rest of the config, and absent when not written', () => {
  assert.deepEqual(loaded(`[server]\napi_keys = ["k1", "k2"]\n[toy]\n${node}`).toy, { level: 3, keys: 2 });
  assert.deepEqual(loaded(`[toy]\nlevel = 5\n${node}`).toy, { level: 5, keys: 0 });
  assert.equal(loaded(node).toy, undefined);
  assert.deepEqual(toyTable.summary(loaded(`[toy]\n${node}`)), ['toy: level 3']);
});

test('its problems are reported by key path beside the others, its cross-checks run over the file as written', () => {
  const result = loadConfig('[toy]\nlevel = "high"\nwhat = 1\n', {});
  assert.ok(!result.ok);
  assert.deepEqual(result.problems, [
    { path: 'toy.level', message: 'must be a whole number' },
    { path: 'toy.what', message: 'unknown key; expected one of: level' },
    { path: 'toy', message: 'needs [[nodes]]' },
  ]);
  // Without the table in the list, [toy] is an unknown key of the file like any other.
  const without = configLoader([]).loadConfig(`[toy]\n${node}`, {});
  assert.ok(!without.ok);
  assert.deepEqual(
    without.problems.map((p) => p.path),
    ['toy'],
  );
});

test('its restart-only keys follow the gateway’s own', () => {
  const restartOnly = restartOnlyChecker([toyTable]);
  const before = loaded(`[server]\nlisten = "127.0.0.1:8080"\n[toy]\nlevel = 1\n${node}`);
  const after = loaded(`[server]\nlisten = "127.0.0.1:9090"\n[toy]\nlevel = 2\n${node}`);
  assert.deepEqual(restartOnly(before, after), ['server.listen', 'toy.level']);
  assert.deepEqual(restartOnly(before, before), []);
});

test('a list that names a table twice is refused where it is built', () => {
  assert.throws(() => configLoader([toyTable, toyTable]), /the config tables list "toy" twice/);
});
