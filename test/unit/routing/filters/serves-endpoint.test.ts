// serves-endpoint: a node takes a request only on an endpoint its kind (or `[[nodes]] endpoints`)
// serves and it has not answered with a route-level 404; a request without an endpoint passes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { InferenceEndpoint, NodeSpec } from '#src/config/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import { defaultFilters, servesEndpoint } from '#src/routing/filters/index.ts';
import { leastInFlight, RouteIndex, route } from '#src/routing/index.ts';
import { node, request, snapshotOf } from '#test/fixtures/builders.ts';

function view(
  kind: NodeSpec['kind'],
  extra: { endpoints?: readonly InferenceEndpoint[]; lacking?: Record<string, string> } = {},
): NodeView {
  const base = node('n', { models: ['m'], kind });
  return {
    ...base,
    spec: { ...base.spec, ...(extra.endpoints === undefined ? {} : { endpoints: extra.endpoints }) },
    ...(extra.lacking === undefined ? {} : { lackingEndpoints: extra.lacking }),
  };
}

test('the verdict per kind, configured set and learned 404, by endpoint', () => {
  const rows: readonly (readonly [string, NodeView, InferenceEndpoint | undefined, string | undefined])[] = [
    ['a request with no endpoint passes any node', view('openai'), undefined, undefined],
    ['llama-server serves /v1/messages', view('llamacpp'), '/v1/messages', undefined],
    ['vLLM serves count_tokens', view('vllm'), '/v1/messages/count_tokens', undefined],
    ['an auto node is assumed to serve it (a 404 teaches otherwise)', view('auto'), '/v1/messages', undefined],
    ['a plain OpenAI server serves chat', view('openai'), '/v1/chat/completions', undefined],
    [
      'a plain OpenAI server does not serve /v1/messages',
      view('openai'),
      '/v1/messages',
      'its kind (openai) does not serve POST /v1/messages',
    ],
    ['configured endpoints replace the kind’s', view('openai', { endpoints: ['/v1/messages'] }), '/v1/messages', undefined],
    [
      'configured endpoints leave the rest out',
      view('vllm', { endpoints: ['/v1/messages'] }),
      '/v1/embeddings',
      'its [[nodes]] endpoints does not serve POST /v1/embeddings',
    ],
    [
      'a learned route-level 404 excludes the endpoint',
      view('sglang', { lacking: { '/v1/messages': '404 {"detail":"Not Found"}' } }),
      '/v1/messages',
      'answered POST /v1/messages with a route-level 404 (404 {"detail":"Not Found"})',
    ],
    [
      'a learned 404 leaves the other endpoints alone',
      view('sglang', { lacking: { '/v1/messages': '404' } }),
      '/v1/chat/completions',
      undefined,
    ],
  ];
  for (const [what, candidate, endpoint, detail] of rows) {
    const snapshot = snapshotOf([candidate]);
    const { kept, excluded } = servesEndpoint.apply(request('m', { endpoint }), snapshot.nodes, snapshot);
    if (detail === undefined) {
      assert.deepEqual(excluded, [], what);
      assert.equal(kept.length, 1, what);
    } else {
      assert.deepEqual(excluded, [{ node: 'n', filter: 'serves-endpoint', code: 'endpoint_unsupported', detail }], what);
    }
  }
});

test('it sits in the default pipeline after serves-model, so a node without the model is reported missing first', () => {
  const names = defaultFilters().map((f) => f.name);
  assert.equal(names.indexOf('serves-endpoint'), names.indexOf('serves-model') + 1);
});

test('the routing index keeps verdicts per endpoint: the same model on two endpoints is judged apart', () => {
  const plain = node('plain', { models: ['m'], kind: 'openai' });
  const llama = node('llama', { models: ['m'], kind: 'llamacpp' });
  const snapshot = snapshotOf([plain, llama]);
  const index = new RouteIndex();
  for (const [endpoint, expected] of [
    ['/v1/chat/completions', 2],
    ['/v1/messages', 1],
    ['/v1/chat/completions', 2],
  ] as const) {
    const indexed = route(request('m', { endpoint }), snapshot, defaultFilters(), leastInFlight(), index);
    const plainRoute = route(request('m', { endpoint }), snapshot, defaultFilters(), leastInFlight());
    assert.equal(indexed.kind, 'selected');
    assert.deepEqual(indexed.excluded, plainRoute.excluded, endpoint);
    assert.equal(2 - indexed.excluded.length, expected, endpoint);
  }
});
