import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NODE_KINDS, type NodeKind } from '#src/config/index.ts';
import { serverKind, serverKinds } from '#src/kinds/index.ts';

test('the registry holds exactly the kinds config accepts, each under its own name', () => {
  assert.deepEqual(
    serverKinds()
      .map((kind) => kind.name)
      .sort(),
    [...NODE_KINDS].sort(),
  );
  for (const name of NODE_KINDS) assert.equal(serverKind(name).name, name);
});

test('each kind is probed where it answers; auto tries the specific paths before the listing', () => {
  const expected: Record<NodeKind, readonly string[]> = {
    auto: ['/health', '/api/version', '/v1/models'],
    vllm: ['/health'],
    llamacpp: ['/health'],
    sglang: ['/health'],
    ollama: ['/api/version'],
    openai: ['/v1/models'],
  };
  for (const name of NODE_KINDS) assert.deepEqual(serverKind(name).healthPaths, expected[name], name);
});

test('which kinds have a capacity request and a tokenizer of their own', () => {
  const table: [NodeKind, string | undefined, string | undefined][] = [
    ['auto', '/props', undefined],
    ['llamacpp', '/props', '/tokenize?autoload=false'],
    ['ollama', '/api/ps', undefined],
    ['vllm', undefined, '/tokenize'],
    ['sglang', undefined, '/tokenize'],
    ['openai', undefined, undefined],
  ];
  for (const [name, capacityPath, tokenizePath] of table) {
    const kind = serverKind(name);
    assert.equal(kind.capacity?.path, capacityPath, name);
    assert.equal(kind.tokenize?.request('m', 't').path, tokenizePath, name);
  }
  assert.deepEqual(serverKind('vllm').tokenize?.request('m', 'hi'), { path: '/tokenize', body: { model: 'm', prompt: 'hi' } });
  assert.equal(serverKind('sglang').tokenize?.count({ tokens: [1, 2], count: 5 }), 5);
});

test('auto reads a listing with every kind\'s quirk: Ollama\'s "data": null is an empty list', () => {
  assert.deepEqual(serverKind('auto').normalizeListing({ object: 'list', data: null }), { object: 'list', data: [] });
  for (const name of ['vllm', 'llamacpp', 'sglang', 'openai'] as const) {
    const body = { object: 'list', data: null };
    assert.equal(serverKind(name).normalizeListing(body), body, name);
  }
});
