// Issue 44: OpenAI's `validating`, through the official openai client. `batches.create` answers
// the job `validating` (its input not yet checked: no request counted, no in_progress_at); the
// runner then checks every line against the job and it goes on to `in_progress` and `completed`
// — or, when a line's url is not the job's endpoint, to `failed` with `errors.data` naming the
// line, having run nothing. (A GET during validation, a cancel and a restart while validating:
// test/unit/batch/batch-validating.test.ts, on a manual clock.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { vllmNode } from '#test/fixtures/tenant-gateway.ts';
import { chatLine, pollUntil, startBatchGateway, upload, type BatchGateway } from './batch-fixture.ts';

let fleet: BatchGateway;

before(async () => {
  fleet = await startBatchGateway({ fleet: vllmNode('one', ['m']) });
});

after(async () => {
  await fleet?.close();
  fleet?.removeState();
});

test('a batch is created validating, then runs: in_progress, completed', async () => {
  const client = fleet.client();
  const file = await upload(
    client,
    Array.from({ length: 20 }, (_, i) => chatLine(`v${i}`, 'm', `line ${i}`)),
  );
  const created = await client.batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });
  assert.equal(created.status, 'validating');
  assert.equal(created.in_progress_at, null);
  assert.deepEqual(created.request_counts, { total: 0, completed: 0, failed: 0 });
  const done = await pollUntil(client, created.id, ['completed', 'failed', 'expired', 'cancelled']);
  assert.equal(done.status, 'completed');
  assert.deepEqual(done.request_counts, { total: 20, completed: 20, failed: 0 });
  assert.ok(typeof done.in_progress_at === 'number' && done.in_progress_at >= done.created_at);
});

test('a line whose url is not the batch’s endpoint: validating, then failed with errors.data naming the line; nothing runs', async () => {
  const client = fleet.client();
  const embedding = JSON.stringify({ custom_id: 'e', method: 'POST', url: '/v1/embeddings', body: { model: 'm', input: 'x' } });
  const file = await upload(client, [chatLine('a', 'm', 'fine'), embedding, chatLine('b', 'm', 'fine')]);
  const created = await client.batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });
  assert.equal(created.status, 'validating', 'the check is not done inside the POST');
  const failed = await pollUntil(client, created.id, ['failed', 'in_progress', 'completed']);
  assert.equal(failed.status, 'failed');
  assert.ok(failed.failed_at !== null);
  assert.equal(failed.in_progress_at, null);
  assert.deepEqual(
    failed.errors?.data?.map((e) => [e.code, e.line]),
    [['mismatched_endpoint', 2]],
  );
  assert.match(failed.errors?.data?.[0]?.message ?? '', /line 2: `url` \/v1\/embeddings is not the batch's endpoint/);
  assert.deepEqual(failed.request_counts, { total: 0, completed: 0, failed: 0 });
  assert.equal(failed.output_file_id, null);
  assert.equal(failed.error_file_id, null);
});
