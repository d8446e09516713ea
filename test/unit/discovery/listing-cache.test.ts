import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { Agent } from 'undici';
import type { NodeSpec } from '#src/config/types.ts';
import { fetchModelList, ListingCache, type DiscoveryResult } from '#src/discovery/index.ts';
import { spec } from '#test/fixtures/builders.ts';

function nodeAt(url: string, fields: Partial<NodeSpec> = {}): NodeSpec {
  return spec('gpu-a', { url, kind: 'vllm', ...fields });
}

const OK: DiscoveryResult = { ok: true, models: [] };
const RULES = { maxModels: 10, maxIdBytes: 64 };

test('an unchanged answer under the same settings reuses the result; anything else misses', () => {
  const cache = new ListingCache();
  const node = nodeAt('http://127.0.0.1:1');
  cache.set(node, RULES, Buffer.from('body'), OK);
  assert.equal(cache.get(node, RULES, Buffer.from('body')), OK);
  assert.equal(cache.get(node, { ...RULES }, Buffer.from('body')), OK, 'equal rules (a new object each poll) still match');
  assert.equal(cache.get(node, RULES, Buffer.from('body2')), undefined, 'another answer');
  assert.equal(cache.get(nodeAt('http://127.0.0.1:2'), RULES, Buffer.from('body')), undefined, 'another url');
  assert.equal(cache.get(nodeAt(node.url, { kind: 'llamacpp' }), RULES, Buffer.from('body')), undefined, 'another kind');
  assert.equal(cache.get(node, { ...RULES, maxModels: 5 }, Buffer.from('body')), undefined, 'other limits');
  assert.equal(cache.get(node, { ...RULES, allowed: ['x'] }, Buffer.from('body')), undefined, 'another allow-list');
  assert.equal(cache.get(nodeAt(node.url, { name: 'other' }), RULES, Buffer.from('body')), undefined, 'another node');
});

test('the cache is bounded: one entry per node, and at most maxBytes of answers (oldest out first)', () => {
  const cache = new ListingCache(10);
  const a = nodeAt('http://127.0.0.1:1', { name: 'a' });
  const b = nodeAt('http://127.0.0.1:1', { name: 'b' });
  cache.set(a, undefined, Buffer.from('1234'), OK);
  cache.set(a, undefined, Buffer.from('12345'), OK);
  assert.equal(cache.bytes, 5, "a node's new answer replaces its old one");
  cache.set(b, undefined, Buffer.from('123456'), OK);
  assert.equal(cache.get(a, undefined, Buffer.from('12345')), undefined, 'the oldest went');
  assert.equal(cache.get(b, undefined, Buffer.from('123456')), OK);
  cache.set(a, undefined, Buffer.from('12345678901'), OK);
  assert.equal(cache.get(a, undefined, Buffer.from('12345678901')), undefined, 'an answer larger than the bound is not kept');
  cache.setNodes([a]);
  assert.equal(cache.bytes, 0, 'nodes no longer configured are forgotten');
});

test('fetchModelList parses an answer once, and again only when it changes', async (t) => {
  let body = JSON.stringify({ object: 'list', data: [{ id: 'llama' }] });
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const agent = new Agent({ connections: 1 });
  t.after(async () => {
    await agent.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const node = nodeAt(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  const cache = new ListingCache();
  const options = { dispatcher: agent, timeoutMs: 2_000, maxBodyBytes: 64 * 1024, rules: RULES, cache };
  const first = await fetchModelList(node, options);
  assert.equal(first.ok && first.models[0]?.id, 'llama');
  assert.equal(await fetchModelList(node, options), first, 'same bytes: the same result object');
  body = JSON.stringify({ object: 'list', data: [{ id: 'qwen' }] });
  const changed = await fetchModelList(node, options);
  assert.equal(changed.ok && changed.models[0]?.id, 'qwen');
  body = '{"object":"list","data":[{"id":';
  const broken = await fetchModelList(node, options);
  assert.equal(broken.ok, false, 'a broken answer is reported, never served from the cache');
  body = JSON.stringify({ object: 'list', data: [{ id: 'qwen' }] });
  assert.equal(await fetchModelList(node, options), changed, 'a broken answer left the cache as it was');
});
