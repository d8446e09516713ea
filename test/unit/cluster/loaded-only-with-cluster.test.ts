// Without [cluster] nothing extra is loaded: the store client is imported by src/cluster/ alone,
// and src/cluster/ is reached from the rest of src/ only by a dynamic import (or `import type`),
// but for its feature file (cluster-feature.ts), which the feature list (src/gateway/features.ts)
// imports: what that file loads statically never reaches the store client (it loads the rest of
// the folder by a dynamic import in its start). Likewise its config table (cluster-table.ts), which
// the config's list (src/config-tables.ts) imports: every config load reads it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const SRC = new URL('../../../src/', import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

test('the store clients are imported only in src/cluster/; src/cluster/ only by a dynamic import or for types', () => {
  const problems: string[] = [];
  for (const file of sources(SRC)) {
    const path = relative(SRC, file);
    const text = readFileSync(file, 'utf8');
    const staticImports = [...text.matchAll(/^import\s+(type\s+)?[^;]*?from\s+'([^']+)'/gms)].map((m) => ({
      typeOnly: m[1] !== undefined,
      from: m[2] ?? '',
    }));
    for (const { typeOnly, from } of staticImports) {
      if (/^(iovalkey|ioredis|redis|@redis\/)/.test(from) && !path.startsWith('cluster/'))
        problems.push(`${path} imports ${from}`);
      const featureList =
        (path === 'gateway/features.ts' && from === '#src/cluster/cluster-feature.ts') ||
        (path === 'config-tables.ts' && from === '#src/cluster/cluster-table.ts');
      if (from.startsWith('#src/cluster/') && !typeOnly && !path.startsWith('cluster/') && !featureList)
        problems.push(`${path} imports ${from} statically`);
    }
  }
  assert.deepEqual(problems, []);
});

/** The files of src/ a file loads by its static value imports (import type aside), transitively. */
function staticClosure(start: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^(?:import|export)\s+(type\s+)?[^;]*?from\s+'([^']+)'/gms)) {
      const from = m[2] ?? '';
      if (m[1] !== undefined) continue;
      if (from.startsWith('#src/')) visit(join(SRC, from.slice('#src/'.length)));
      else if (from.startsWith('.')) visit(resolve(dirname(file), from));
      else seen.add(from);
    }
  };
  visit(start);
  return seen;
}

test('the cluster feature file loads neither the store client nor the store statically (both come with start)', () => {
  const loaded = [...staticClosure(join(SRC, 'cluster/cluster-feature.ts'))].map((f) =>
    f.startsWith(SRC) ? relative(SRC, f) : f,
  );
  const heavy = loaded.filter(
    (f) => /^(iovalkey|ioredis|redis|@redis\/)/.test(f) || f === 'cluster/redis-store.ts' || f === 'cluster/index.ts',
  );
  assert.deepEqual(heavy, []);
  // The closure is followed for real: the feature file's own rules are in it.
  assert.ok(loaded.includes('cluster/cluster-report.ts'), loaded.join(', '));
});

test('the cluster config table loads neither the store client nor the store, nor the feature (a config load reads it)', () => {
  const loaded = [...staticClosure(join(SRC, 'cluster/cluster-table.ts'))].map((f) => (f.startsWith(SRC) ? relative(SRC, f) : f));
  const heavy = loaded.filter(
    (f) =>
      /^(iovalkey|ioredis|redis|@redis\/)/.test(f) ||
      (f.startsWith('cluster/') && !/^cluster\/cluster-(table|config)\.ts$/.test(f)),
  );
  assert.deepEqual(heavy, []);
  assert.ok(loaded.includes('config/schema-parts.ts'), loaded.join(', '));
});
