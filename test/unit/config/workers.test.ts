// `[server] workers`: a whole number of request workers, or "auto"; anything else is named.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatProblems } from '#src/config/load.ts';
import { loadConfig } from '#src/config-tables.ts';

const ONE_NODE = '[[nodes]]\nname = "gpu-a"\nurl = "http://10.0.0.5:8000"\n';

const cases: readonly { readonly value: string; readonly expect: number | 'auto' | 'problem' }[] = [
  { value: '1', expect: 1 },
  { value: '2', expect: 2 },
  { value: '64', expect: 64 },
  { value: '"auto"', expect: 'auto' },
  { value: '0', expect: 'problem' },
  { value: '-1', expect: 'problem' },
  { value: '1.5', expect: 'problem' },
  { value: '65', expect: 'problem' },
  { value: '"two"', expect: 'problem' },
  { value: 'true', expect: 'problem' },
];

for (const { value, expect } of cases) {
  test(`server.workers = ${value} → ${expect}`, () => {
    const result = loadConfig(`[server]\nworkers = ${value}\n${ONE_NODE}`, {});
    if (expect === 'problem') {
      assert.ok(!result.ok, 'expected a problem');
      const problem = result.problems.find((p) => p.path === 'server.workers');
      assert.ok(problem !== undefined, formatProblems(result.problems));
      assert.match(problem.message, /whole number from 1 to 64, or "auto"/);
    } else {
      assert.ok(result.ok, result.ok ? '' : formatProblems(result.problems));
      assert.equal(result.config.server.workers, expect);
    }
  });
}
