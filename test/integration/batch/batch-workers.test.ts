// Issue 44: the Files and Batch API with `[server] workers = 2` — served wherever state_dir is set.
// Every request worker answers the whole API over the one batch file (uploads, list/get/content,
// create, cancel); the owner thread's one runner sends each line back through the public listener,
// so a worker's request path serves it as the job's tenant (the request log's events, replayed on
// the owner, carry each line's `<batch>-<n>` id and the tenant). The official openai client uploads,
// creates, polls to completed and reads one output line per custom_id; a cancel made on a worker
// stops new lines at once (the node never sees a line the cancel found waiting). A write that waits
// past the file's busy timeout (another connection holding it) is a 503 batch_busy, leaving nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { APIError } from 'openai';
import { ManualClock } from '#src/core/clock.ts';
import { eventually, httpJson, simRequests } from '#test/fixtures/http.ts';
import { HELD_NODE, tenantsToml, vllmNode } from '#test/fixtures/tenant-gateway.ts';
import { chatLine, fileLines, pollUntil, startBatchGateway, upload, type BatchGateway } from './batch-fixture.ts';

const KEY = 'sk-batch-workers-1';
const TENANT = 'team-w';
const heldClock = new ManualClock();

let fleet: BatchGateway;

before(async () => {
  fleet = await startBatchGateway({
    fleet: [vllmNode('one', ['m']), vllmNode('two', ['m'])].join('\n'),
    held: { fleet: HELD_NODE, clock: heldClock },
    server: 'workers = 2',
    extra: tenantsToml([{ name: TENANT, keys: [KEY] }]),
  });
});

after(async () => {
  await fleet?.close();
  fleet?.removeState();
});

/** A GET on a connection of its own: the kernel hands each new connection to one of the workers. */
function freshGet(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = get(
      url,
      { agent: false, headers: { authorization: `Bearer ${KEY}` }, signal: AbortSignal.timeout(60_000) },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
  });
}

test('workers = 2: the openai client uploads, creates a batch, polls it to completed; one 200 line per custom_id', async () => {
  const client = fleet.client(KEY);
  const total = 300;
  const lines = Array.from({ length: total }, (_, i) => chatLine(`w-${i}`, 'm', `line ${i}`));
  const file = await upload(client, lines);
  assert.equal(file.purpose, 'batch');
  // Each on a new connection, which the kernel hands to either worker: any of them reads what another wrote.
  for (let i = 0; i < 16; i++) {
    const one = await freshGet(`${fleet.gw.url}/v1/files/${file.id}`);
    assert.equal(one.status, 200, one.body);
    assert.equal((JSON.parse(one.body) as { id: string }).id, file.id);
  }
  const content = await freshGet(`${fleet.gw.url}/v1/files/${file.id}/content`);
  assert.equal(content.body, `${lines.join('\n')}\n`);
  const listed = await freshGet(`${fleet.gw.url}/v1/files`);
  assert.ok((JSON.parse(listed.body) as { data: { id: string }[] }).data.some((f) => f.id === file.id));

  const finished: { requestId: string; tenant: string | undefined; status: number }[] = [];
  const off = fleet.gw.gateway.requestEvents.on('proxy:request-finished', (e) =>
    finished.push({ requestId: e.detail?.requestId ?? '', tenant: e.tenant, status: e.status }),
  );
  try {
    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const done = await pollUntil(client, created.id, ['completed', 'failed', 'expired', 'cancelled']);
    assert.equal(done.status, 'completed');
    assert.deepEqual(done.request_counts, { total, completed: total, failed: 0 });
    const output = await fileLines(client, done.output_file_id);
    assert.equal(output.length, total);
    assert.deepEqual(output.map((l) => l.custom_id).sort(), lines.map((_, i) => `w-${i}`).sort(), 'each custom_id once');
    for (const line of output) {
      assert.equal(line.response?.status_code, 200, JSON.stringify(line));
      assert.equal(line.response?.body.object, 'chat.completion');
      assert.match(line.response?.request_id ?? '', new RegExp(`^${created.id}-\\d+$`));
    }
    // Each line went through a worker's request path as the job's tenant (the events are the workers', replayed here).
    await eventually(
      () => finished.filter((f) => f.requestId.startsWith(`${created.id}-`)).length >= total,
      60_000,
      'every line finished',
    );
    const ofJob = finished.filter((f) => f.requestId.startsWith(`${created.id}-`));
    assert.equal(new Set(ofJob.map((f) => f.requestId)).size, total, 'each line served once');
    assert.ok(
      ofJob.every((f) => f.tenant === TENANT && f.status === 200),
      'served as the job’s tenant',
    );
    // The workers' own figures say so too (each reports every second).
    let workers: { requests: number }[] = [];
    await eventually(
      async () => {
        ({ workers } = (await httpJson('GET', `${fleet.gw.url}/admin/runtime`)).json<{ workers: { requests: number }[] }>());
        return workers.reduce((sum, w) => sum + w.requests, 0) >= total;
      },
      60_000,
      'the workers to report the lines',
    );
    assert.equal(workers.length, 2);
    // Listed through a new connection too.
    const batches = await freshGet(`${fleet.gw.url}/v1/batches`);
    assert.equal((JSON.parse(batches.body) as { data: { id: string }[] }).data[0]?.id, created.id);
  } finally {
    off();
  }
});

test('workers = 2: a cancel made on a worker stops new lines at once; the lines in flight finish', async () => {
  const client = fleet.client(KEY);
  const total = 20;
  const held = fleet.held!.url('held');
  const chats = async (): Promise<number> => (await simRequests(held)).filter((r) => r.path === '/v1/chat/completions').length;
  const before = await chats();
  const file = await upload(
    client,
    Array.from({ length: total }, (_, i) => chatLine(`c-${i}`, 'slow', `held ${i}`)),
  );
  const batch = await client.batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });
  // The node holds the lines it got until its clock moves: they stay in flight across the cancel.
  await eventually(async () => (await chats()) > before, 120_000, 'a first line at the held node');
  const cancelled = await client.batches.cancel(batch.id);
  assert.equal(cancelled.status, 'cancelling');
  // The lines still waiting failed in the cancel's own transaction: the rest were sent before it.
  const sentBeforeCancel = total - (cancelled.request_counts?.failed ?? 0);
  assert.ok(sentBeforeCancel > 0 && sentBeforeCancel < total, JSON.stringify(cancelled.request_counts));
  let last = cancelled;
  await eventually(
    async () => {
      heldClock.advance(500);
      last = await client.batches.retrieve(batch.id);
      return last.status === 'cancelled';
    },
    240_000,
    'the batch to end cancelled',
  );
  assert.deepEqual(last.request_counts, { total, completed: sentBeforeCancel, failed: total - sentBeforeCancel });
  assert.equal((await chats()) - before, sentBeforeCancel, 'no line was sent after the cancel');
  const output = await fileLines(client, last.output_file_id);
  assert.equal(output.length, sentBeforeCancel);
  const errors = await fileLines(client, last.error_file_id);
  assert.equal(errors.length, total - sentBeforeCancel);
  assert.ok(
    errors.every((l) => l.error?.code === 'batch_cancelled'),
    JSON.stringify(errors[0]),
  );
});

/** Runs `run` while another connection holds the batch file's write lock (as a large job's insert by another worker would). */
async function whileHeld<T>(run: () => Promise<T>): Promise<T> {
  const holder = new DatabaseSync(join(fleet.stateDir, 'batch.sqlite'));
  holder.exec('BEGIN IMMEDIATE');
  try {
    return await run();
  } finally {
    holder.exec('ROLLBACK');
    holder.close();
  }
}

async function busyAnswer(call: () => Promise<unknown>): Promise<void> {
  const refused = await call().then(
    () => assert.fail('the call succeeded while the file was held'),
    (error: unknown) => error,
  );
  assert.ok(refused instanceof APIError, String(refused));
  assert.equal(refused.status, 503);
  assert.equal(refused.code, 'batch_busy');
}

test('workers = 2: a write that waits past the busy timeout is a 503 batch_busy (upload, create, cancel) and changes nothing', async () => {
  const client = fleet.client(KEY);
  const filesDir = join(fleet.stateDir, 'batch-files');
  const before = readdirSync(filesDir).sort();
  await whileHeld(() => busyAnswer(() => upload(client, [chatLine('b-1', 'm', 'busy')])));
  assert.deepEqual(readdirSync(filesDir).sort(), before, 'no file left behind');

  const held = fleet.held!.url('held');
  const chats = async (): Promise<number> => (await simRequests(held)).filter((r) => r.path === '/v1/chat/completions').length;
  const first = await chats();
  const file = await upload(
    client,
    Array.from({ length: 8 }, (_, i) => chatLine(`b-${i}`, 'slow', `held ${i}`)),
  );
  const ask = { input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' } as const;
  await whileHeld(() => busyAnswer(() => client.batches.create(ask)));
  assert.equal((await client.batches.list()).data.filter((b) => b.input_file_id === file.id).length, 0, 'no batch made');
  const batch = await client.batches.create(ask);
  await eventually(async () => (await chats()) > first, 120_000, 'a first line at the held node');
  await whileHeld(() => busyAnswer(() => client.batches.cancel(batch.id)));
  assert.equal((await client.batches.retrieve(batch.id)).status, 'in_progress', 'not cancelled');
  assert.equal((await client.batches.cancel(batch.id)).status, 'cancelling');
  await eventually(
    async () => {
      heldClock.advance(500);
      return (await client.batches.retrieve(batch.id)).status === 'cancelled';
    },
    240_000,
    'the batch to end cancelled',
  );
});
