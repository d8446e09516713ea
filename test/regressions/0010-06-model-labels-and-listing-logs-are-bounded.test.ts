// Issue 10, item 6: model ids went into metric labels and logs whole. 100 listed ids of 10 KB grew
// /metrics to 32 MB, and a node flipping between two 50k-id listings logged every id on every change
// (~11 GB a day). Now every model label goes through one bounded-label function (at most 128
// characters, a hash suffix keeps long ids distinct, past 256 distinct model labels `_other`), and a
// listing change logs counts (added, removed, total) plus a sample of at most 10 ids, each cut short.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '#src/config-tables.ts';
import { Gateway } from '#src/main.ts';
import { capturedLogger } from '#test/fixtures/captured-logs.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { metricsText } from '#test/fixtures/gateway-state.ts';
import { loadedEntry, startListingNode, type ListingNode } from '#test/fixtures/listing-node.ts';
import { on, untilEvent } from '#test/fixtures/events.ts';

const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function gatewayFor(
  node: ListingNode,
  discoveryKeys: string,
): Promise<{ gateway: Gateway; lines: Record<string, unknown>[] }> {
  const toml = `[server]\nlisten = "127.0.0.1:0"\n[discovery]\n${discoveryKeys}\n[[nodes]]\nname = "n"\nurl = "${node.url}"\nkind = "vllm"\n`;
  const loaded = loadConfig(toml, {});
  assert.ok(loaded.ok, JSON.stringify(loaded));
  const { logger, lines } = capturedLogger();
  const gateway = await Gateway.start({ config: loaded.config, logger });
  closers.push(() => gateway.close());
  return { gateway, lines };
}

/** The distinct values of label `model` in a Prometheus text. */
function modelLabels(text: string): Set<string> {
  const values = new Set<string>();
  for (const match of text.matchAll(/model="((?:[^"\\]|\\.)*)"/g)) values.add(match[1] ?? '');
  return values;
}

test('long model ids and many of them leave /metrics small: labels cut with a hash, past 256 `_other`', async () => {
  const long = Array.from({ length: 100 }, (_, i) => `${String(i).padStart(3, '0')}-${'x'.repeat(10_000)}`);
  const short = Array.from({ length: 170 }, (_, i) => `short-${i}`);
  const ids = [...long, ...short];
  const node = await startListingNode({ listing: () => ids.map(loadedEntry), router: false });
  closers.push(() => node.close());
  // The operator allows long ids in listings; metrics must stay bounded regardless.
  const { gateway } = await gatewayFor(node, 'interval = "1h"\nmax_model_id_bytes = 20000');
  assert.ok(await gateway.firstRoundDone(10_000));

  const queue = [...ids];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        const res = await httpJson('POST', `${gateway.url}/v1/chat/completions`, {
          model: id,
          messages: [{ role: 'user', content: 'hi' }],
        });
        assert.equal(res.status, 200, res.text.slice(0, 200));
      }
    }),
  );
  const text = await metricsText(gateway.url);
  assert.ok(text.length < 2_000_000, `/metrics is ${text.length} bytes`);
  const labels = modelLabels(text);
  for (const label of labels) assert.ok(label.length <= 128, `a label of ${label.length} characters`);
  assert.ok(labels.size <= 257, `${labels.size} distinct model labels`);
  assert.ok(labels.has('_other'), 'ids past the cap share `_other`');
  const longLabels = [...labels].filter((label) => label.includes('xxxx'));
  assert.equal(longLabels.length, 100, 'cut labels of distinct ids stay distinct');
});

test('a node flipping between two large listings logs counts and a short sample, not the ids', async () => {
  const listing = (poll: number): string[] =>
    Array.from({ length: 2_000 }, (_, i) => `${poll % 2 === 0 ? 'even' : 'odd'}-model-${i}`);
  const node = await startListingNode({ listing: (poll) => listing(poll).map(loadedEntry), router: false });
  closers.push(() => node.close());
  const { gateway, lines } = await gatewayFor(node, 'interval = "100ms"\nmax_models_per_node = 5000');

  const changes = (): Record<string, unknown>[] => lines.filter((l) => l.msg === 'node model list changed');
  await untilEvent(() => changes().length >= 2, [on(gateway.registry.events, 'node:discovery')], 'two listing changes logged');
  for (const line of [...changes(), ...lines.filter((l) => l.msg === 'models discovered')]) {
    const size = JSON.stringify(line).length;
    assert.ok(size < 4_096, `a ${size}-byte log line: ${JSON.stringify(line).slice(0, 300)}`);
    assert.equal(line.total, 2_000);
  }
  const [change] = changes();
  assert.deepEqual([change?.addedCount, change?.removedCount], [2_000, 2_000]);
  assert.ok(Array.isArray(change?.added) && change.added.length === 10);
});
