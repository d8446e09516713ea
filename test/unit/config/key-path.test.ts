import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatKeyPath } from '#src/config/key-path.ts';

const cases: readonly (readonly [readonly PropertyKey[], string])[] = [
  [[], ''],
  [['server', 'listen'], 'server.listen'],
  [['nodes', 2, 'url'], 'nodes[2].url'],
  [['models', 'available', 0, 'aliases', 1], 'models.available[0].aliases[1]'],
  [['nodes'], 'nodes'],
  [['server', 'my key'], 'server."my key"'],
  [['server', 'a.b'], 'server."a.b"'],
];
for (const [path, rendered] of cases) {
  test(`renders ${JSON.stringify(path)} as "${rendered}"`, () => {
    assert.equal(formatKeyPath(path), rendered);
  });
}
