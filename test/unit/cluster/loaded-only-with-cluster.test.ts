// Without [cluster] nothing extra is loaded: the store client is imported by src/cluster/ alone,
// and src/cluster/ is reached from the rest of src/ only by a dynamic import (or `import type`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

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
      if (from.startsWith('#src/cluster/') && !typeOnly && !path.startsWith('cluster/'))
        problems.push(`${path} imports ${from} statically`);
    }
  }
  assert.deepEqual(problems, []);
});
