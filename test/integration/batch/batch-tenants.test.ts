// Issue 44: each line of a batch is a request of its job's tenant, at the `batch` class, through
// the whole request path: a model outside the tenant's scope is that line's 404 (the job goes
// on), a spent daily budget is that line's 429 (the job still completes), and the tenant's usage
// counts the lines. The openai client cancels a batch: it ends `cancelled`, lines that never ran
// failed `batch_cancelled`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { httpJson } from '#test/fixtures/http.ts';
import { tenantsToml, vllmNode } from '#test/fixtures/tenant-gateway.ts';
import { chatLine, fileLines, pollUntil, startBatchGateway, upload, type BatchGateway } from './batch-fixture.ts';

const SCOPED_KEY = 'sk-batch-scoped-1';
const POOR_KEY = 'sk-batch-poor-2';
const SLOW_KEY = 'sk-batch-slow-3';

let fleet: BatchGateway;

before(async () => {
  fleet = await startBatchGateway({
    fleet: [vllmNode('one', ['m', 'other']), vllmNode('slow', ['s'], 'ttft = "300ms"\ntokens_per_second = 100')].join('\n'),
    extra: tenantsToml([
      { name: 'scoped', keys: [SCOPED_KEY], models: ['m'] },
      { name: 'poor', keys: [POOR_KEY], tokens_per_day: 120 },
      { name: 'slowpoke', keys: [SLOW_KEY] },
    ]),
  });
});

after(async () => {
  await fleet?.close();
  fleet?.removeState();
});

test('a model outside the tenant’s scope is that line’s 404; the others run; usage is the tenant’s', async () => {
  const client = fleet.client(SCOPED_KEY);
  const lines = Array.from({ length: 10 }, (_, i) => chatLine(`s${i}`, i % 2 === 0 ? 'm' : 'other', `line ${i}`));
  const file = await upload(client, lines);
  const batch = await client.batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });
  const done = await pollUntil(client, batch.id, ['completed', 'failed', 'expired', 'cancelled']);
  assert.equal(done.status, 'completed');
  assert.deepEqual(done.request_counts, { total: 10, completed: 5, failed: 5 });
  const errors = await fileLines(client, done.error_file_id);
  assert.deepEqual(errors.map((l) => l.custom_id).sort(), ['s1', 's3', 's5', 's7', 's9']);
  for (const line of errors) {
    assert.equal(line.response?.status_code, 404);
    assert.equal((line.response?.body.error as { code?: string }).code, 'model_not_found');
  }
  const report = (await httpJson('GET', `${fleet.gw.url}/admin/tenants`)).json<{
    tenants: { name: string; today: { requests: number } }[];
  }>();
  // The lines that ran count as the tenant's requests (an out-of-scope one is answered as an unknown model, never admitted).
  assert.equal(report.tenants.find((t) => t.name === 'scoped')?.today.requests, 5, 'the lines that ran are the tenant’s usage');
});

test('a spent daily budget is each remaining line’s 429, not a crash: the job completes', async () => {
  const client = fleet.client(POOR_KEY);
  const lines = Array.from({ length: 12 }, (_, i) => chatLine(`p${i}`, 'm', `budget line ${i}`));
  const file = await upload(client, lines);
  const batch = await client.batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });
  const done = await pollUntil(client, batch.id, ['completed', 'failed', 'expired', 'cancelled']);
  assert.equal(done.status, 'completed');
  const counts = done.request_counts!;
  assert.equal(counts.total, 12);
  assert.ok(counts.completed > 0 && counts.failed > 0, JSON.stringify(counts));
  assert.equal(counts.completed + counts.failed, 12);
  const errors = await fileLines(client, done.error_file_id);
  assert.equal(errors.length, counts.failed);
  for (const line of errors) {
    assert.equal(line.response?.status_code, 429);
    assert.equal((line.response?.body.error as { code?: string }).code, 'rate_limit_exceeded');
  }
});

test('the openai client cancels a batch: no new line runs, it ends cancelled', async () => {
  const client = fleet.client(SLOW_KEY);
  const lines = Array.from({ length: 60 }, (_, i) => chatLine(`c${i}`, 's', `slow ${i}`, { max_tokens: 30 }));
  const file = await upload(client, lines);
  const batch = await client.batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });
  // Cancelled once its input is checked and its lines run (a cancel while `validating` runs none: batch-validating.test.ts).
  await pollUntil(client, batch.id, ['in_progress']);
  const cancelled = await client.batches.cancel(batch.id);
  assert.ok(['cancelling', 'cancelled'].includes(cancelled.status), cancelled.status);
  const done = await pollUntil(client, batch.id, ['cancelled', 'completed', 'failed', 'expired']);
  assert.equal(done.status, 'cancelled');
  const counts = done.request_counts!;
  assert.equal(counts.completed + counts.failed, 60);
  assert.ok(counts.failed > 0 && counts.completed < 60, JSON.stringify(counts));
  const errors = await fileLines(client, done.error_file_id);
  assert.ok(errors.every((l) => l.error?.code === 'batch_cancelled'));
});
