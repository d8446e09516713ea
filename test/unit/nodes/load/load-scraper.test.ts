import assert from 'node:assert/strict';
import { test } from 'node:test';
import { diffNodes } from '#src/config/index.ts';
import { ManualClock } from '#src/core/clock.ts';
import { LoadScraper, type LoadScrape } from '#src/nodes/index.ts';
import { spec } from '#test/fixtures/builders.ts';

const FIGURES: LoadScrape = { ok: true, figures: { running: 1, waiting: 0, kvUsage: undefined } };
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('scrapes every node at once on start, then on its own cadence; a hung node delays no other', async () => {
  const clock = new ManualClock(0);
  const asked: string[] = [];
  const got: string[] = [];
  const scraper = new LoadScraper({
    clock,
    intervalMs: 1_000,
    // "hung" never answers; its next rounds are skipped while that scrape is in flight.
    scrape: (node) => {
      asked.push(node.name);
      return node.name === 'hung' ? new Promise<LoadScrape>(() => {}) : Promise.resolve(FIGURES);
    },
    onScrape: (node) => got.push(node.name),
  });
  scraper.applyChange(diffNodes([], [spec('a'), spec('hung'), spec('b')]));
  const lifetime = new AbortController();
  await scraper.start(lifetime.signal);
  await tick();
  assert.deepEqual(asked, ['a', 'hung', 'b'], 'the first scrape starts with the loop');
  assert.deepEqual(got, ['a', 'b']);
  clock.advance(1_000);
  await tick();
  assert.deepEqual(asked, ['a', 'hung', 'b', 'a', 'b'], 'the hung scrape is not repeated while in flight');
  assert.deepEqual(got, ['a', 'b', 'a', 'b']);
  lifetime.abort();
  await tick();
  clock.advance(5_000);
  await tick();
  assert.equal(asked.length, 5, 'nothing after stop');
});

test('a node with nothing to scrape reports nothing; a removed node is no longer scraped', async () => {
  const clock = new ManualClock(0);
  const got: string[] = [];
  const scraper = new LoadScraper({
    clock,
    intervalMs: 500,
    scrape: (node) => Promise.resolve(node.kind === 'ollama' ? undefined : FIGURES),
    onScrape: (node) => got.push(node.name),
  });
  const before = [spec('o', { kind: 'ollama' }), spec('v', { kind: 'vllm' })];
  scraper.applyChange(diffNodes([], before));
  await scraper.start(new AbortController().signal);
  await tick();
  assert.deepEqual(got, ['v']);
  scraper.applyChange(diffNodes(before, [spec('o', { kind: 'ollama' })]));
  clock.advance(500);
  await tick();
  assert.deepEqual(got, ['v']);
  await scraper.stop();
});
