// Issue 44: a batch survives a reload (SIGHUP's path) and a restart of the gateway mid-job: the
// second gateway on the same state_dir takes the job up where the first left it, and the node
// got each line exactly once (no line lost, none doubled: nothing was left unkept, so none is
// marked retried); the output has one line per custom_id. The same with `[server] workers = 2`
// (the workers answer the API over the one batch file, the owner thread runs the lines).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { gatewayConfig } from '#test/fixtures/gateway-configs.ts';
import { modelState, waitForNode } from '#test/fixtures/gateway-state.ts';
import { startGateway, startSimFleet } from '#test/fixtures/in-process-fleet.ts';
import { eventually, simRequests } from '#test/fixtures/http.ts';
import { tempStateDir } from '#test/fixtures/state-dirs.ts';
import { vllmNode } from '#test/fixtures/tenant-gateway.ts';
import { chatLine, fileLines, pollUntil, upload } from './batch-fixture.ts';

const LINES = 200;

test('a reload and a restart mid-job lose and double nothing', { timeout: 600_000 }, () => restartMidJob(''));

test('with workers = 2, a reload and a restart mid-job lose and double nothing', { timeout: 600_000 }, () =>
  restartMidJob('\nworkers = 2'),
);

/** A job started, a reload, a restart mid-job on the same state_dir (`server`: more [server] lines). */
async function restartMidJob(server: string): Promise<void> {
  // Each answer takes ~40 ms: the job is mid-way for a while.
  const sim = await startSimFleet(vllmNode('slowish', ['m'], 'ttft = "40ms"\ntokens_per_second = 1000'));
  const state = tempStateDir();
  const config = gatewayConfig({
    health: { interval: '100ms', timeout: '5s', failThreshold: 2 },
    discovery: { interval: '100ms', timeout: '5s' },
    nodes: [{ name: 'slowish', url: sim.url('slowish'), kind: 'vllm' }],
  }).replace('listen = "127.0.0.1:0"', `listen = "127.0.0.1:0"\nstate_dir = "${state.dir}"\ndrain_timeout = "30s"${server}`);
  const client = (url: string): OpenAI => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'none', maxRetries: 0, timeout: 60_000 });
  let first = await startGateway(config);
  try {
    await waitForNode(first, 'slowish', modelState('known'), 'known');
    const file = await upload(
      client(first.url),
      Array.from({ length: LINES }, (_, i) => chatLine(`r${i}`, 'm', `line ${i}`)),
    );
    const created = await client(first.url).batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    let seen = 0;
    await eventually(
      async () => {
        seen = (await client(first.url).batches.retrieve(created.id)).request_counts?.completed ?? 0;
        return seen >= 20;
      },
      240_000,
      'a first part of the job done',
    );
    const reloaded = await first.reload();
    assert.equal(reloaded.ok, true, JSON.stringify(reloaded));
    await eventually(
      async () => ((await client(first.url).batches.retrieve(created.id)).request_counts?.completed ?? 0) >= seen + 20,
      240_000,
      'the job going on after the reload',
    );
    // A restart: the drain lets the lines in flight finish; the next gateway takes the rest up.
    await first.close();
    const middle = (await simRequests(sim.url('slowish'))).filter((r) => r.path === '/v1/chat/completions').length;
    assert.ok(middle < LINES, `stopped mid-job (${middle} of ${LINES} sent)`);
    first = await startGateway(config);
    await waitForNode(first, 'slowish', modelState('known'), 'known');
    const done = await pollUntil(client(first.url), created.id, ['completed', 'failed', 'expired', 'cancelled'], 480_000);
    assert.equal(done.status, 'completed');
    assert.deepEqual(done.request_counts, { total: LINES, completed: LINES, failed: 0 });
    const sent = (await simRequests(sim.url('slowish'))).filter((r) => r.path === '/v1/chat/completions').length;
    assert.equal(sent, LINES, 'the node got each line once');
    const output = await fileLines(client(first.url), done.output_file_id);
    assert.deepEqual(output.map((l) => l.custom_id).sort(), Array.from({ length: LINES }, (_, i) => `r${i}`).sort());
  } finally {
    await first.close();
    await sim.close();
    state.remove();
  }
}
