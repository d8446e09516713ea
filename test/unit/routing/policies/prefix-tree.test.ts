import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PrefixTree } from '#src/routing/index.ts';
import { TENANT_COST, VERTEX_COST } from '#src/routing/policies/prefix-tree.ts';
import { seededRandom } from '#src/sim/seeded-random.ts';

test('match gives each tenant the longest prefix of the text it was sent', () => {
  const tree = new PrefixTree(10_000);
  tree.insert('system: be brief. user: hello', 'a');
  tree.insert('system: be brief. user: goodbye', 'b');
  tree.insert('other prompt', 'c');
  const cases: [string, Record<string, number>][] = [
    ['system: be brief. user: hello again', { a: 29, b: 24 }],
    ['system: be brief. user: good', { a: 24, b: 28 }],
    ['system: be', { a: 10, b: 10 }],
    ['other prompt, longer', { c: 12 }],
    ['nothing alike', {}],
    ['', {}],
  ];
  for (const [text, expected] of cases) assert.deepEqual(Object.fromEntries(tree.match(text)), expected, text);
});

test('a prompt sent to two nodes is credited to both', () => {
  const tree = new PrefixTree(10_000);
  tree.insert('shared prefix one', 'a');
  tree.insert('shared prefix one', 'b');
  assert.deepEqual(Object.fromEntries(tree.match('shared prefix one two')), { a: 17, b: 17 });
});

test('memory stays under its bound after 100,000 distinct prompts; recent ones survive eviction', () => {
  const bound = 200_000;
  const tree = new PrefixTree(bound);
  const random = seededRandom(9);
  const word = (): string => Math.floor(random() * 1e9).toString(36);
  let last = '';
  for (let i = 0; i < 100_000; i += 1) {
    last = `conversation ${word()} ${word()} ${word()} ${word()}`;
    tree.insert(last, `n${i % 8}`);
    if (i % 10_000 === 0) assert.ok(tree.size <= bound, `${tree.size} chars stored after ${i} prompts`);
  }
  assert.ok(tree.size <= bound, `${tree.size} chars stored`);
  assert.equal(tree.match(last).get('n7'), last.length, 'the most recent prompt is still held');
});

test('each vertex and each tenant entry counts against the bound, not only characters', () => {
  const tree = new PrefixTree(1_000_000);
  tree.insert('abcdef', 'a');
  assert.equal(tree.size, 6 + VERTEX_COST + TENANT_COST);
  tree.insert('abcxyz', 'b');
  // 'abc' (a, b) above 'def' (a) and 'xyz' (b).
  assert.equal(tree.vertices, 3);
  assert.equal(tree.size, 9 + 3 * VERTEX_COST + 4 * TENANT_COST);
  tree.insert('abcxyz', 'b');
  assert.equal(tree.size, 9 + 3 * VERTEX_COST + 4 * TENANT_COST, 'the same prompt again adds nothing');
});

test('after an eviction a vertex left with one child and the same tenants is merged into it', () => {
  const perVertex = VERTEX_COST + TENANT_COST;
  // Room for 'abc' + 'def' + 'xyz' + 'q', less one: inserting 'q' evicts the oldest leaf, 'def'.
  const tree = new PrefixTree(10 + 4 * perVertex - 1);
  tree.insert('abcdef', 'a');
  tree.insert('abcxyz', 'a');
  tree.insert('q', 'a');
  assert.equal(tree.vertices, 2, "'abc' and 'xyz' became 'abcxyz'");
  assert.equal(tree.size, 7 + 2 * perVertex);
  assert.deepEqual(Object.fromEntries(tree.match('abcxyz!')), { a: 6 });
  assert.deepEqual(Object.fromEntries(tree.match('abcdef')), { a: 3 });
});

test('a vertex with tenants its one child lacks is kept: they were sent its prefix', () => {
  const tree = new PrefixTree(10 + 4 * VERTEX_COST + 5 * TENANT_COST - 1);
  tree.insert('abcdef', 'a');
  tree.insert('abcxyz', 'b');
  tree.insert('q', 'b');
  assert.equal(tree.vertices, 3, "'abc' (a, b) stays above 'xyz' (b)");
  assert.deepEqual(Object.fromEntries(tree.match('abcdef')), { a: 3, b: 3 });
  assert.deepEqual(Object.fromEntries(tree.match('abcxyz')), { a: 3, b: 6 });
});
