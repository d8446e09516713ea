// Issue 28, lean process: start-up's allocations mostly survive (modules, the config), so V8 grew
// the young generation to its ceiling while the gateway started (16 MB semispaces with the
// recommended flags) and kept it for good: an idle gateway never collects in a way that shrinks it.
// `serve` now runs one memory-reducing collection once every node's first round is done (src/cli/
// shed-start-up-heap.ts), which gives the young generation back (~15 MB of an idle gateway's RSS).
// Checked by the new space's size in the gateway's own /metrics, not by its RSS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startCli, writeTempFile } from '#test/fixtures/processes.ts';

const MIB = 1024 * 1024;

test(
  'serve gives back the young generation start-up grew, once every node has had its first round',
  { timeout: 150_000 },
  async () => {
    const file = await writeTempFile('switchyard.toml', gatewayToml([{ name: 'a', url: 'http://127.0.0.1:1', kind: 'vllm' }]));
    const proc = startCli(['serve', '--config', file.path], { NODE_OPTIONS: '--max-semi-space-size=16' });
    try {
      const listening = await proc.waitForLine((l) => l.includes('"gateway listening"'), 120_000);
      const url = (JSON.parse(listening) as { url: string }).url;
      const shed = await proc.waitForLine((l) => l.includes('"start-up heap given back"'), 30_000).catch(() => undefined);
      const metrics = await (await fetch(`${url}/metrics`)).text();
      const newSpace = Number(
        /^gateway_process_nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)$/m.exec(metrics)?.[1] ?? 'NaN',
      );
      assert.ok(newSpace <= 4 * MIB, `the young generation is back near its floor: ${(newSpace / MIB).toFixed(1)} MB`);
      assert.ok(shed !== undefined, 'serve says it gave back the start-up heap once the node had its first round');
      const fields = JSON.parse(shed) as { rss_before_mb: number; rss_after_mb: number };
      assert.ok(fields.rss_before_mb > 0 && fields.rss_after_mb > 0, 'the line says the RSS before and after');
      assert.equal(await proc.stop(), 0);
    } finally {
      await proc.stop();
      await file.cleanup();
    }
  },
);
