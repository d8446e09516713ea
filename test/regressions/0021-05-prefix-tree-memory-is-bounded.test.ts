// Issue 21, item 5: the cache-aware prefix tree bounded the characters on its edges, not its memory.
// Prompts that branch at every character cost ~500 bytes of heap per counted character (a vertex,
// two Maps, an LRU entry), so 2 M tiny distinct prompts grew the heap by about 1 GB under the default
// 4,000,000-character bound, past the 1 GiB heap limit: the process aborted, every stream lost.
// A second way past the bound: an edge was a view into the text it was cut from (V8 slices), so
// the first 8,192 characters of a 200,000-character prompt kept all of it alive, counted as 8,192. Now each vertex and tenant entry is charged its
// memory, edges own their characters, and vertices left with one child are merged after eviction.
// The figure checked: the heap the tree keeps, after a full collection, stays under 2.5 bytes per
// unit of its bound (measured ~1.25).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { PrefixTree } from '#src/routing/index.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** The tree's heap may be at most this many bytes per unit of its bound (plus a little slack for the test's own garbage). */
const BYTES_PER_UNIT = 2.5;
const SLACK_BYTES = 4 * 1024 * 1024;

function heapUsed(): number {
  gc();
  return process.memoryUsage().heapUsed;
}

function assertHeldUnder(tree: PrefixTree, bound: number, before: number, after: string): void {
  assert.ok(tree.size <= bound, `${tree.size} units held against a bound of ${bound}, ${after}`);
  const grown = heapUsed() - before;
  const limit = BYTES_PER_UNIT * bound + SLACK_BYTES;
  assert.ok(
    grown <= limit,
    `the tree holds ${(grown / 2 ** 20).toFixed(1)} MiB of heap ${after}; the bound allows ${(limit / 2 ** 20).toFixed(1)} MiB`,
  );
}

test('2 M tiny prompts that branch at every character keep the heap within the default bound', () => {
  const bound = 4_000_000;
  const tenants = Array.from({ length: 8 }, (_, i) => `node-${i}`);
  const before = heapUsed();
  const tree = new PrefixTree(bound);
  const inserts = 2_000_000;
  for (let i = 0; i < inserts; i += 1) {
    // The base-36 digits reversed: every prompt distinct, and every character a branch.
    tree.insert([...i.toString(36)].reverse().join(''), tenants[i % 8] ?? '');
    // Checked along the way too, so that an unbounded tree fails here long before it exhausts the heap.
    if (i % 500_000 === 499_999) assertHeldUnder(tree, bound, before, `after ${i + 1} prompts`);
  }
  assertHeldUnder(tree, bound, before, `after ${inserts} prompts`);
  const latest = [...(inserts - 1).toString(36)].reverse().join('');
  assert.equal(tree.match(latest).get(tenants[(inserts - 1) % 8] ?? ''), latest.length, 'the latest prompt is held');
});

test('a prompt cut from a longer text does not keep the whole text alive', () => {
  // The gateway stores the first cache_prompt_chars of a prompt: a slice of the whole prompt's text.
  const bound = 1_000_000;
  const maxPromptChars = 8_192;
  const before = heapUsed();
  const tree = new PrefixTree(bound);
  const body = 'x'.repeat(200_000);
  for (let i = 0; i < 1_000; i += 1) {
    const whole = `conversation ${i}: ${body}`;
    tree.insert(whole.slice(0, maxPromptChars), `node-${i % 4}`);
  }
  assertHeldUnder(tree, bound, before, 'after 1,000 prompts cut from 200,000-character texts');
});
