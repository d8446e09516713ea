// Issue 44: Anthropic's Message Batches API out of the same runner and store, through the official
// @anthropic-ai/sdk client unchanged — create with the requests inline, poll `retrieve` to `ended`,
// read `results()` (the SDK's JSONL decoder): one line per custom_id; a model outside the tenant's
// scope is that request's `errored` result; cancel; another tenant's id answers 404 as an unknown
// one; errors in Anthropic's shape; OpenAI's batch routes never show a Message Batch.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { eventually } from '#test/fixtures/http.ts';
import { tenantsToml, vllmNode } from '#test/fixtures/tenant-gateway.ts';
import { startBatchGateway, type BatchGateway } from './batch-fixture.ts';

const MAIN_KEY = 'sk-msgbatch-main-1';
const SCOPED_KEY = 'sk-msgbatch-scoped-2';
const OTHER_KEY = 'sk-msgbatch-other-3';

let fleet: BatchGateway;

before(async () => {
  fleet = await startBatchGateway({
    fleet: [vllmNode('one', ['m', 'other']), vllmNode('slow', ['s'], 'ttft = "400ms"\ntokens_per_second = 100')].join('\n'),
    extra: tenantsToml([
      { name: 'main', keys: [MAIN_KEY] },
      { name: 'scoped', keys: [SCOPED_KEY], models: ['m'] },
      { name: 'other', keys: [OTHER_KEY] },
    ]),
    batch: 'max_in_flight = 2',
  });
});

after(async () => {
  await fleet?.close();
  fleet?.removeState();
});

const client = (apiKey: string): Anthropic => new Anthropic({ baseURL: fleet.gw.url, apiKey, maxRetries: 0, timeout: 60_000 });

const request = (customId: string, model: string, content: string): Anthropic.Messages.BatchCreateParams.Request => ({
  custom_id: customId,
  params: { model, max_tokens: 4, messages: [{ role: 'user', content }] },
});

async function pollEnded(anthropic: Anthropic, id: string): Promise<Anthropic.Messages.MessageBatch> {
  let last: Anthropic.Messages.MessageBatch | undefined;
  await eventually(
    async () => {
      last = await anthropic.messages.batches.retrieve(id);
      return last.processing_status === 'ended';
    },
    240_000,
    `message batch ${id} to end (last: ${last?.processing_status} ${JSON.stringify(last?.request_counts)})`,
  );
  return last!;
}

async function results(anthropic: Anthropic, id: string): Promise<Anthropic.Messages.MessageBatchIndividualResponse[]> {
  const lines: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
  for await (const line of await anthropic.messages.batches.results(id)) lines.push(line);
  return lines;
}

test('the anthropic client creates a Message Batch, polls it to ended and reads one succeeded result per custom_id', async () => {
  const anthropic = client(MAIN_KEY);
  const requests = Array.from({ length: 24 }, (_, i) => request(`req-${i}`, 'm', `question ${i}`));
  const created = await anthropic.messages.batches.create({ requests });
  assert.match(created.id, /^msgbatch_/);
  assert.equal(created.type, 'message_batch');
  assert.equal(created.processing_status, 'in_progress');
  assert.deepEqual(created.request_counts, { processing: 24, succeeded: 0, errored: 0, canceled: 0, expired: 0 });
  assert.equal(created.results_url, null);
  assert.equal(created.ended_at, null);
  assert.equal(Date.parse(created.expires_at) - Date.parse(created.created_at), 24 * 3_600_000);
  assert.match(created.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

  const ended = await pollEnded(anthropic, created.id);
  assert.deepEqual(ended.request_counts, { processing: 0, succeeded: 24, errored: 0, canceled: 0, expired: 0 });
  assert.ok(ended.ended_at !== null && Date.parse(ended.ended_at) >= Date.parse(ended.created_at));
  assert.equal(ended.results_url, `${fleet.gw.url}/v1/messages/batches/${created.id}/results`);

  const lines = await results(anthropic, created.id);
  assert.deepEqual(lines.map((l) => l.custom_id).sort(), requests.map((r) => r.custom_id).sort(), 'one result per custom_id');
  for (const line of lines) {
    assert.equal(line.result.type, 'succeeded', JSON.stringify(line));
    if (line.result.type === 'succeeded') {
      assert.equal(line.result.message.type, 'message');
      assert.equal(line.result.message.role, 'assistant');
    }
  }

  // Listed for its tenant (newest first, Anthropic's page), never on OpenAI's batch routes.
  const page = await anthropic.messages.batches.list({ limit: 5 });
  assert.equal(page.data[0]?.id, created.id);
  assert.equal(page.first_id, created.id);
  const openaiList = await fleet.client(MAIN_KEY).batches.list();
  assert.ok(!openaiList.data.some((b) => b.id === created.id), 'an OpenAI listing shows no Message Batch');
  await assert.rejects(fleet.client(MAIN_KEY).batches.retrieve(created.id), { status: 404 });

  // Deleted once ended: then it is gone.
  assert.deepEqual(await anthropic.messages.batches.delete(created.id), { id: created.id, type: 'message_batch_deleted' });
  await assert.rejects(anthropic.messages.batches.retrieve(created.id), Anthropic.NotFoundError);
});

test('a model outside the tenant’s scope is that request’s errored result (not_found_error); the others succeed', async () => {
  const anthropic = client(SCOPED_KEY);
  const requests = Array.from({ length: 8 }, (_, i) => request(`s-${i}`, i % 2 === 0 ? 'm' : 'other', `line ${i}`));
  const created = await anthropic.messages.batches.create({ requests });
  const ended = await pollEnded(anthropic, created.id);
  assert.deepEqual(ended.request_counts, { processing: 0, succeeded: 4, errored: 4, canceled: 0, expired: 0 });
  const lines = await results(anthropic, created.id);
  assert.equal(lines.length, 8);
  for (const line of lines) {
    const inScope = Number(line.custom_id.slice(2)) % 2 === 0;
    if (inScope) assert.equal(line.result.type, 'succeeded', JSON.stringify(line));
    else {
      assert.equal(line.result.type, 'errored', JSON.stringify(line));
      if (line.result.type === 'errored') {
        assert.equal(line.result.error.type, 'error');
        assert.equal(line.result.error.error.type, 'not_found_error', JSON.stringify(line.result.error));
        assert.match(line.result.error.request_id ?? '', new RegExp(`^${created.id}-\\d+$`));
      }
    }
  }
});

test('cancel: the batch is canceling, then ended; requests that never ran are canceled results', async () => {
  const anthropic = client(MAIN_KEY);
  const requests = Array.from({ length: 30 }, (_, i) => request(`c-${i}`, 's', `slow ${i}`));
  const created = await anthropic.messages.batches.create({ requests });
  const cancelling = await anthropic.messages.batches.cancel(created.id);
  assert.equal(cancelling.processing_status, 'canceling');
  assert.ok(cancelling.cancel_initiated_at !== null);
  // Results come only once it ended: Anthropic's error shape until then.
  const early = await fetch(`${fleet.gw.url}/v1/messages/batches/${created.id}/results`, { headers: { 'x-api-key': MAIN_KEY } });
  if (early.status !== 200) {
    assert.equal(early.status, 400);
    const body = (await early.json()) as { type: string; error: { type: string } };
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, 'invalid_request_error');
  } else await early.body?.cancel();
  const ended = await pollEnded(anthropic, created.id);
  const counts = ended.request_counts;
  assert.equal(counts.succeeded + counts.errored + counts.canceled + counts.expired, 30);
  assert.ok(counts.canceled >= 28, `at most the 2 lines in flight ran (${JSON.stringify(counts)})`);
  const lines = await results(anthropic, created.id);
  assert.equal(lines.length, 30);
  assert.equal(lines.filter((l) => l.result.type === 'canceled').length, counts.canceled);
  await assert.rejects(
    anthropic.messages.batches.cancel(created.id),
    Anthropic.BadRequestError,
    'an ended batch is not cancelled',
  );
});

test('another tenant’s Message Batch answers 404 exactly as an unknown id, on every route', async () => {
  const owner = client(MAIN_KEY);
  const created = await owner.messages.batches.create({ requests: [request('only', 'm', 'mine')] });
  const stranger = client(OTHER_KEY);
  for (const call of [
    () => stranger.messages.batches.retrieve(created.id),
    () => stranger.messages.batches.cancel(created.id),
    () => stranger.messages.batches.delete(created.id),
    () => stranger.messages.batches.retrieve('msgbatch_000000000000000000000000'),
  ])
    await assert.rejects(call(), (error: unknown) => {
      assert.ok(error instanceof Anthropic.NotFoundError, String(error));
      assert.equal((error.error as { error?: { type?: string } }).error?.type, 'not_found_error');
      return true;
    });
  assert.ok(!(await stranger.messages.batches.list()).data.some((b) => b.id === created.id));
  await pollEnded(owner, created.id);
  await assert.rejects(results(stranger, created.id), Anthropic.NotFoundError);
});

test('a bad create is refused whole in Anthropic’s shape, naming each request; no key is a 401', async () => {
  const anthropic = client(MAIN_KEY);
  await assert.rejects(
    anthropic.messages.batches.create({
      requests: [request('good', 'm', 'a'), request('has space', 'm', 'b'), request('good', 'm', 'c')],
    }),
    (error: unknown) => {
      assert.ok(error instanceof Anthropic.BadRequestError, String(error));
      const body = error.error as { type: string; error: { type: string; message: string } };
      assert.equal(body.type, 'error');
      assert.equal(body.error.type, 'invalid_request_error');
      assert.match(body.error.message, /requests\.1\.custom_id/);
      assert.match(body.error.message, /requests\.2\.custom_id: "good" is used by an earlier request/);
      return true;
    },
  );
  await assert.rejects(anthropic.messages.batches.create({ requests: [] }), Anthropic.BadRequestError);
  await assert.rejects(client('sk-not-a-key').messages.batches.list(), (error: unknown) => {
    assert.ok(error instanceof Anthropic.AuthenticationError, String(error));
    assert.equal((error.error as { type?: string }).type, 'error');
    return true;
  });
  // A Bearer token works as x-api-key does.
  const bearer = await fetch(`${fleet.gw.url}/v1/messages/batches`, { headers: { authorization: `Bearer ${MAIN_KEY}` } });
  assert.equal(bearer.status, 200);
  assert.ok(Array.isArray(((await bearer.json()) as { data: unknown[] }).data));
});

test('the list pages as Anthropic’s: newest first, after_id to older, before_id to newer, has_more each way', async () => {
  const anthropic = client(OTHER_KEY);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    ids.push((await anthropic.messages.batches.create({ requests: [request(`p${i}`, 'm', 'x')] })).id);
    // Apart by a few milliseconds: the list orders by creation time (then by id, within one millisecond).
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const newestFirst = [...ids].reverse();
  const walked: string[] = [];
  for await (const batch of anthropic.messages.batches.list({ limit: 1 })) walked.push(batch.id);
  assert.deepEqual(walked.slice(0, 3), newestFirst, 'after_id walks to older ones');
  const first = await anthropic.messages.batches.list({ limit: 2 });
  assert.deepEqual(
    first.data.map((b) => b.id),
    newestFirst.slice(0, 2),
  );
  assert.equal(first.has_more, true);
  assert.equal(first.last_id, newestFirst[1]);
  const older = await anthropic.messages.batches.list({ limit: 2, after_id: newestFirst[1] });
  assert.deepEqual(
    older.data.map((b) => b.id),
    [newestFirst[2]],
  );
  const newer = await anthropic.messages.batches.list({ limit: 1, before_id: newestFirst[2] });
  assert.deepEqual(
    newer.data.map((b) => b.id),
    [newestFirst[1]],
  );
  assert.equal(newer.has_more, true, 'one newer still before it');
  const newest = await anthropic.messages.batches.list({ limit: 5, before_id: newestFirst[1] });
  assert.deepEqual(
    newest.data.map((b) => b.id),
    [newestFirst[0]],
  );
  assert.equal(newest.has_more, false);
  await assert.rejects(anthropic.messages.batches.list({ limit: 1001 }), Anthropic.BadRequestError);
});
