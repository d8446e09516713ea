// Issue 44: Anthropic's Message Batches over the runner's real file, on a manual clock: the 24-hour
// window passing ends the batch with the requests never sent `expired` and those answered kept;
// a cancel ends the unsent ones `canceled` while the one in flight finishes; counts are all
// `processing` until it ended; results come only once it ended, and a deleted batch is gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { GatewayError } from '#src/core/errors.ts';
import { tempStateDir } from '#test/fixtures/state-dirs.ts';
import { ok, startHarness, type Harness } from './runner-harness.ts';

const requests = (n: number): unknown => ({
  requests: Array.from({ length: n }, (_, i) => ({
    custom_id: `r${i}`,
    params: { model: 'm', max_tokens: 1, messages: [{ role: 'user', content: `q${i}` }] },
  })),
});

async function resultsOf(h: Harness, id: string): Promise<{ custom_id: string; result: { type: string } }[]> {
  const stream = h.api.messages.results('default', id);
  assert.ok(stream instanceof Readable, String(stream));
  let text = '';
  for await (const chunk of stream) text += String(chunk);
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { custom_id: string; result: { type: string } });
}

const message = { type: 'message', role: 'assistant', content: [] };

test('the 24-hour window passing: answered requests kept, the rest expired; results once ended', async () => {
  const t = tempStateDir();
  try {
    // A tick an hour (answers and creates still wake the runner at once): the clock jumps a day without a tick per 100 ms.
    const h = startHarness(t.dir, {
      room: (_m, own, cap) => Math.min(cap, Math.max(0, 2 - own)),
      settings: { tickMs: 3_600_000 },
    });
    const created = h.api.messages.create('default', requests(5), 'http://gw') as { id: string };
    h.runner.start();
    await h.until(() => h.held().length === 2, 'two in flight');
    for (const held of h.held()) held.answer(ok(message));
    await h.until(() => h.held().length === 2, 'two more in flight');
    const early = h.api.messages.results('default', created.id);
    assert.ok(early instanceof GatewayError && early.status === 400, 'no results before it ended');
    const running = h.api.messages.retrieve('default', created.id, 'http://gw') as { request_counts: unknown };
    assert.deepEqual(running.request_counts, { processing: 5, succeeded: 0, errored: 0, canceled: 0, expired: 0 });
    h.clock.advance(24 * 3_600_000);
    await h.turn();
    for (const held of h.held()) held.answer(ok(message));
    await h.until(() => h.store.batch(created.id)?.status === 'expired', 'ended expired');
    const ended = h.api.messages.retrieve('default', created.id, 'http://gw') as Record<string, unknown>;
    assert.equal(ended.processing_status, 'ended');
    assert.deepEqual(ended.request_counts, { processing: 0, succeeded: 4, errored: 0, canceled: 0, expired: 1 });
    const results = await resultsOf(h, created.id);
    assert.deepEqual(
      results.map((r) => [r.custom_id, r.result.type]),
      [
        ['r0', 'succeeded'],
        ['r1', 'succeeded'],
        ['r2', 'succeeded'],
        ['r3', 'succeeded'],
        ['r4', 'expired'],
      ],
    );
    assert.equal(h.store.batch(created.id)?.outputFileId, null, 'no output file: results are read from the lines');
    assert.deepEqual(h.api.messages.delete('default', created.id), { id: created.id, type: 'message_batch_deleted' });
    assert.equal(h.store.batch(created.id), undefined);
    assert.deepEqual(h.store.counts(created.id), { waiting: 0, sent: 0, done: 0, failed: 0 }, 'its lines deleted with it');
    await h.stop();
  } finally {
    t.remove();
  }
});

test('cancel: canceling while a request is in flight (it finishes), the rest canceled; delete refused until ended', async () => {
  const t = tempStateDir();
  try {
    const h = startHarness(t.dir, { room: (_m, own, cap) => Math.min(cap, Math.max(0, 1 - own)) });
    const created = h.api.messages.create('default', requests(4), 'http://gw') as { id: string };
    h.runner.start();
    await h.until(() => h.held().length === 1, 'one in flight');
    const cancelling = h.api.messages.cancel('default', created.id, 'http://gw') as Record<string, unknown>;
    assert.equal(cancelling.processing_status, 'canceling');
    assert.equal(typeof cancelling.cancel_initiated_at, 'string');
    const refused = h.api.messages.delete('default', created.id);
    assert.ok(refused instanceof GatewayError && refused.status === 400);
    for (const held of h.held()) held.answer(ok(message));
    await h.until(() => h.store.batch(created.id)?.status === 'cancelled', 'ended');
    assert.equal(h.sent.length, 1, 'no request sent after the cancel');
    const ended = h.api.messages.retrieve('default', created.id, 'http://gw') as Record<string, unknown>;
    assert.deepEqual(ended.request_counts, { processing: 0, succeeded: 1, errored: 0, canceled: 3, expired: 0 });
    assert.equal(ended.results_url, `http://gw/v1/messages/batches/${created.id}/results`);
    assert.deepEqual(
      (await resultsOf(h, created.id)).map((r) => r.result.type),
      ['succeeded', 'canceled', 'canceled', 'canceled'],
    );
    await h.stop();
  } finally {
    t.remove();
  }
});
