// Issue 44: OpenAI's Files and Batch API served by the gateway, as the official openai client
// calls it. A 1,000-line JSONL is uploaded, a batch created and polled to `completed` on a sim
// fleet; the output file has exactly one 200 line per custom_id, in OpenAI's line shape, and the
// request counts say so. Malformed lines are refused with their line numbers; without
// [server] state_dir the API says what to set; a tenant sees only its own files and batches.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { APIError } from 'openai';
import { runBatches } from '#src/cli/batches.ts';
import { HangupRelay } from '#src/cli/hangups.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { tenantsToml, vllmNode } from '#test/fixtures/tenant-gateway.ts';
import { chatLine, fileLines, pollUntil, startBatchGateway, upload, type BatchGateway } from './batch-fixture.ts';

const FLEET = [vllmNode('one', ['m']), vllmNode('two', ['m'])].join('\n');
const A_KEY = 'sk-batch-team-a-1';
const B_KEY = 'sk-batch-team-b-2';

let fleet: BatchGateway;

before(async () => {
  fleet = await startBatchGateway({
    fleet: FLEET,
    extra: tenantsToml([
      { name: 'team-a', keys: [A_KEY] },
      { name: 'team-b', keys: [B_KEY] },
    ]),
  });
});

after(async () => {
  await fleet?.close();
  fleet?.removeState();
});

async function refusal(run: () => Promise<unknown>): Promise<APIError> {
  try {
    await run();
  } catch (error) {
    assert.ok(error instanceof APIError, String(error));
    return error;
  }
  assert.fail('the call succeeded');
}

test('the openai client uploads 1,000 lines, creates a batch, polls it to completed; one 200 line per custom_id', async () => {
  const client = fleet.client(A_KEY);
  const lines = Array.from({ length: 1_000 }, (_, i) => chatLine(`req-${i}`, 'm', `line ${i}`));
  const file = await upload(client, lines);
  assert.equal(file.purpose, 'batch');
  assert.equal(file.object, 'file');
  assert.ok(file.bytes > 0);
  assert.equal((await client.files.retrieve(file.id)).id, file.id);
  const created = await client.batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
    metadata: { suite: 'nightly' },
  });
  assert.equal(created.object, 'batch');
  assert.deepEqual(created.metadata, { suite: 'nightly' });
  const done = await pollUntil(client, created.id, ['completed', 'failed', 'expired', 'cancelled']);
  assert.equal(done.status, 'completed');
  assert.deepEqual(done.request_counts, { total: 1_000, completed: 1_000, failed: 0 });
  assert.ok(done.completed_at !== null && done.in_progress_at !== null && done.finalizing_at !== null);
  assert.equal(done.error_file_id, null, 'no line failed: no error file');
  const output = await fileLines(client, done.output_file_id);
  assert.equal(output.length, 1_000);
  assert.deepEqual(new Set(output.map((l) => l.custom_id)), new Set(lines.map((_, i) => `req-${i}`)), 'each custom_id once');
  for (const line of output) {
    assert.equal(line.response?.status_code, 200, JSON.stringify(line));
    assert.equal(line.error, null);
    assert.equal(line.response?.body.object, 'chat.completion');
    assert.equal(line.response?.body.model, 'm');
    assert.match(line.response?.request_id ?? '', new RegExp(`^${created.id}-\\d+$`));
  }
  // Listed, newest first, and paged as OpenAI pages.
  const page = await client.batches.list({ limit: 1 });
  assert.equal(page.data[0]?.id, created.id);
  const files = await client.files.list();
  assert.ok(files.data.some((f) => f.id === done.output_file_id && f.purpose === 'batch_output'));
  // The operator's view: /admin/batches and `switchyard batches`.
  const view = (await httpJson('GET', `${fleet.gw.url}/admin/batches`)).json<{ batches: Record<string, unknown>[] }>();
  const row = view.batches.find((b) => b.id === created.id);
  assert.deepEqual([row?.tenant, row?.status, row?.completed, row?.failed, row?.waiting], ['team-a', 'completed', 1_000, 0, 0]);
  assert.equal(typeof row?.lines_per_second, 'number');
  const stdout = new PassThrough();
  let printed = '';
  stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  const code = await runBatches(['--url', fleet.gw.url], {
    stdout,
    stderr: new PassThrough(),
    env: {},
    signal: AbortSignal.timeout(60_000),
    hangups: new HangupRelay(0),
  });
  assert.equal(code, 0);
  assert.match(printed, new RegExp(`${created.id}\\s+team-a\\s+completed\\s+1000/1000`));
});

test('malformed lines are refused with the number of every bad line', async () => {
  const client = fleet.client(A_KEY);
  const lines = [
    chatLine('ok-1', 'm', 'fine'),
    '{"custom_id": "broken", ',
    chatLine('ok-1', 'm', 'a repeated custom_id'),
    JSON.stringify({ custom_id: 'x', method: 'GET', url: '/v1/chat/completions', body: { model: 'm' } }),
    JSON.stringify({ custom_id: 'y', method: 'POST', url: '/v1/images', body: { model: 'm' } }),
    chatLine('ok-2', 'm', 'fine'),
    JSON.stringify({ custom_id: 'z', method: 'POST', url: '/v1/chat/completions', body: { messages: [] } }),
  ];
  const error = await refusal(() => upload(client, lines));
  assert.equal(error.status, 400);
  for (const n of [2, 3, 4, 5, 7]) assert.match(error.message, new RegExp(`line ${n}:`), error.message);
  assert.doesNotMatch(error.message, /line (1|6):/);
  const body = error.error as { errors?: { data: { line: number }[] } };
  assert.deepEqual(
    body.errors?.data.map((e) => e.line),
    [2, 3, 4, 5, 7],
  );
  assert.equal((await client.files.list()).data.filter((f) => f.purpose === 'batch' && f.bytes === 0).length, 0);
});

test('a tenant sees only its own files and batches', async () => {
  const a = fleet.client(A_KEY);
  const b = fleet.client(B_KEY);
  const file = await upload(a, [chatLine('only', 'm', 'mine')]);
  const batch = await a.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  assert.equal((await refusal(() => b.files.retrieve(file.id))).status, 404);
  assert.equal((await refusal(() => b.files.content(file.id))).status, 404);
  assert.equal((await refusal(() => b.files.delete(file.id))).status, 404);
  assert.equal((await refusal(() => b.batches.retrieve(batch.id))).status, 404);
  assert.equal(
    (
      await refusal(() =>
        b.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
      )
    ).status,
    404,
  );
  assert.ok(!(await b.files.list()).data.some((f) => f.id === file.id));
  assert.ok(!(await b.batches.list()).data.some((x) => x.id === batch.id));
  const deleted = await a.files.delete(file.id);
  assert.equal(deleted.deleted, true);
  assert.equal((await refusal(() => a.files.retrieve(file.id))).status, 404);
});

test('without [server] state_dir the API answers what to set', async () => {
  const bare = await startBatchGateway({ fleet: vllmNode('solo', ['m']), stateDir: null });
  try {
    const error = await refusal(() => upload(bare.client(), [chatLine('a', 'm', 'x')]));
    assert.equal(error.status, 503);
    assert.match(error.message, /\[server\] state_dir/);
    assert.equal((await refusal(() => bare.client().batches.list())).status, 503);
  } finally {
    await bare.close();
  }
});
