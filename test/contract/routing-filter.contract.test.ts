// The contract every routing filter keeps (src/routing/filter.ts), checked for each filter of the
// default pipeline over a varied fleet and requests: no node is dropped silently (kept and excluded
// are the candidates, each once), every exclusion names its filter and a reason, a filter is pure
// (the same input gives the same verdict), and a filter that says it reads only the model (`'model'`:
// the routing index reuses its verdicts) judges each node alike alone or among the others.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeView } from '#src/nodes/index.ts';
import { defaultFilters } from '#src/routing/index.ts';
import type { RouteRequest } from '#src/routing/index.ts';
import { NOW, node, request, snapshotOf } from '#test/fixtures/builders.ts';

const FLEET: readonly NodeView[] = [
  node('llama', { models: ['m'], kind: 'llamacpp', capacity: { models: { m: { nCtx: 4096, slots: 2 } } } }),
  node('plain', { models: ['m'], kind: 'openai' }),
  node('dead', { models: ['m'], health: 'dead' }),
  node('other', { models: ['x'], kind: 'vllm' }),
  node('grouped', { models: ['m'], group: 'g' }),
  node('ejected', { models: ['m'], ejectedUntil: NOW + 60_000 }),
  { ...node('old', { models: ['m'], kind: 'sglang' }), lackingEndpoints: { '/v1/messages': '404 {"detail":"Not Found"}' } },
  node('unlisted', {}),
];

const REQUESTS: readonly RouteRequest[] = [
  request('m'),
  request('m', { endpoint: '/v1/messages' }),
  request('m', { endpoint: '/v1/chat/completions', promptTokens: 5000 }),
  request('m', { triedNodes: new Set(['llama']) }),
  request('x', { endpoint: '/v1/messages/count_tokens' }),
  request('m', { group: 'g' }),
];

for (const filter of defaultFilters()) {
  test(`filter ${filter.name} keeps the filter contract`, () => {
    const snapshot = snapshotOf([...FLEET]);
    for (const req of REQUESTS) {
      const what = `${filter.name} on ${req.model} ${req.endpoint ?? '(any endpoint)'}`;
      const result = filter.apply(req, snapshot.nodes, snapshot);
      const seen = [...result.kept.map((n) => n.spec.name), ...result.excluded.map((e) => e.node)].sort();
      assert.deepEqual(seen, snapshot.nodes.map((n) => n.spec.name).sort(), `${what}: every candidate kept or excluded, once`);
      for (const e of result.excluded) {
        assert.equal(e.filter, filter.name, what);
        assert.match(e.code, /^[a-z_]+$/, what);
      }
      assert.deepEqual(filter.apply(req, snapshot.nodes, snapshot), result, `${what}: pure`);
      if (filter.reads === 'model') {
        for (const candidate of snapshot.nodes) {
          const alone = filter.apply(req, [candidate], snapshot);
          assert.deepEqual(
            alone.excluded,
            result.excluded.filter((e) => e.node === candidate.spec.name),
            `${what}: ${candidate.spec.name} judged alone`,
          );
        }
      }
    }
  });
}
