// The capacity filter, table-driven: connections (upstream.max_connections) first, then slots and
// context budget; every verdict that says "busy" makes the request wait in the queue.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { capacityVerdict, classifyUnroutable } from '#src/routing/index.ts';
import { node, request, snapshotOf } from '#test/fixtures/builders.ts';

const vllm = node('v', { models: ['m'], kind: 'vllm' });
const llama = node('l', { models: ['m'], kind: 'llamacpp', capacity: { role: 'single', host: { nCtx: 4096, slots: 2 } } });

const rows: {
  name: string;
  view: typeof vllm;
  inFlight: number;
  limit: number | undefined;
  requests?: number;
  code: string | undefined;
}[] = [
  { name: 'no limit configured', view: vllm, inFlight: 500, limit: undefined, code: undefined },
  { name: 'below the limit', view: vllm, inFlight: 1, limit: 2, code: undefined },
  { name: 'at the limit', view: vllm, inFlight: 2, limit: 2, code: 'connections_full' },
  { name: 'past the limit (lowered by a reload)', view: vllm, inFlight: 5, limit: 2, code: 'connections_full' },
  { name: 'connections are reported before slots', view: llama, inFlight: 2, limit: 2, requests: 2, code: 'connections_full' },
  { name: 'slots still count below the connection limit', view: llama, inFlight: 2, limit: 8, requests: 2, code: 'no_slot' },
];

for (const row of rows) {
  test(`capacityVerdict: ${row.name}`, () => {
    const base = snapshotOf(
      [row.view],
      { [row.view.spec.name]: row.inFlight },
      { [`${row.view.spec.name}/m`]: { requests: row.requests ?? 0, tokens: 0 } },
    );
    const verdict = capacityVerdict(request('m', { promptTokens: 10 }), row.view, { ...base, connectionLimit: row.limit });
    assert.equal(verdict?.code, row.code);
    if (row.code === 'connections_full')
      assert.match(
        String(verdict?.detail),
        new RegExp(`${row.inFlight}/${row.limit} connections in use \\(upstream\\.max_connections\\)`),
      );
  });
}

test('a node without free connections is busy: the request waits in the queue', () => {
  assert.equal(classifyUnroutable([{ node: 'v', filter: 'has-capacity', code: 'connections_full' }]), 'busy');
  assert.equal(
    classifyUnroutable([
      { node: 'v', filter: 'has-capacity', code: 'connections_full' },
      { node: 'w', filter: 'fits-context', code: 'too_small' },
    ]),
    'busy',
  );
});
