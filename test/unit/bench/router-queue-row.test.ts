// Issue 41's router-queue bench is a row of `npm run bench`: without a real router (LLAMA_SERVER_BIN,
// LLAMA_MODELS_DIR) it is skipped with the reason, starting nothing; its rows render as a table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderRouterQueue, routerQueueSkip, runRouterQueueBench } from '../../../bench/router-queue.ts';

test('router-queue is skipped, naming what is missing, unless both LLAMA_SERVER_BIN and LLAMA_MODELS_DIR are set', async () => {
  assert.match(routerQueueSkip({}) ?? '', /^router-queue skipped: LLAMA_SERVER_BIN and LLAMA_MODELS_DIR are not set/);
  assert.match(routerQueueSkip({ LLAMA_SERVER_BIN: '/bin/llama-server' }) ?? '', /skipped: LLAMA_MODELS_DIR is not set/);
  assert.match(routerQueueSkip({ LLAMA_SERVER_BIN: '', LLAMA_MODELS_DIR: '/m' }) ?? '', /skipped: LLAMA_SERVER_BIN is not set/);
  assert.equal(routerQueueSkip({ LLAMA_SERVER_BIN: '/bin/llama-server', LLAMA_MODELS_DIR: '/m' }), undefined);
  const logged: string[] = [];
  const result = await runRouterQueueBench({ rounds: 1, log: (line) => logged.push(line), env: {} });
  assert.ok('skipped' in result);
  assert.deepEqual(logged, [result.skipped]);
  assert.match(renderRouterQueue(result), /### Router queue \(issue 41\)\n\nrouter-queue skipped: /);
});

test('router-queue rows render one table line per way', () => {
  const md = renderRouterQueue({
    rows: [
      {
        way: 'router alone',
        rounds: 3,
        requests: 36,
        ok: 30,
        wait_ms: { p50: 1_400.2, max: 4_300 },
        loads: 4,
        loads_per_round: 4 / 3,
        errors: ['500 proxy error | x'],
      },
    ],
  });
  assert.match(md, /\| router alone \| 30\/36 \| 1400 \| 4300 \| 1\.33 \| 500 proxy error \/ x \|/);
});
