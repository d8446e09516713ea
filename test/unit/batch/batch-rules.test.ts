// Issue 44: the batch feature's pure rules, by table: a line's check (with its number), JSONL split
// across chunks, what an answer means for its line, the pacing's room, a job's next step, the
// completion window and the [batch] table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkLine, isProblem } from '#src/batch/batch-line.ts';
import { LineSplitter, type SplitLine } from '#src/batch/line-splitter.ts';
import { lineVerdict } from '#src/batch/line-verdict.ts';
import { batchRoom, UNKNOWN_SLOTS } from '#src/batch/pace.ts';
import { completionWindowMs, jobStep } from '#src/batch/batch-lifecycle.ts';
import { BATCH_DEFAULTS, batchSettings, BatchConfigProblem } from '#src/batch/batch-config.ts';
import type { NodeView } from '#src/nodes/index.ts';

const good = (id: string, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model: 'm', messages: [], ...extra } });

test('a line: the request it asks for, or what is wrong with it and its number', () => {
  const cases: [string, RegExp | undefined][] = [
    [good('a'), undefined],
    ['{"custom_id": ', /^line 7: not valid JSON/],
    ['[1]', /^line 7: must be a JSON object/],
    [JSON.stringify({ method: 'POST', url: '/v1/embeddings', body: { model: 'm' } }), /custom_id/],
    [JSON.stringify({ custom_id: 'b', method: 'GET', url: '/v1/embeddings', body: { model: 'm' } }), /method/],
    [JSON.stringify({ custom_id: 'b', method: 'POST', url: '/v1/moderations', body: { model: 'm' } }), /`url` must be one of/],
    [JSON.stringify({ custom_id: 'b', method: 'POST', url: '/v1/embeddings', body: [] }), /`body` must be a JSON object/],
    [JSON.stringify({ custom_id: 'b', method: 'POST', url: '/v1/embeddings', body: {} }), /body\.model/],
    [good('c', { stream: true }), /stream/],
    [good('x'.repeat(513)), /longer than 512/],
  ];
  for (const [text, problem] of cases) {
    const checked = checkLine(text, 7, new Set());
    if (problem === undefined) assert.ok(!isProblem(checked), text);
    else {
      assert.ok(isProblem(checked), text);
      assert.equal(checked.line, 7);
      assert.match(checked.message, problem);
    }
  }
  const seen = new Set<string>();
  assert.ok(!isProblem(checkLine(good('dup'), 1, seen)));
  const again = checkLine(good('dup'), 2, seen);
  assert.ok(isProblem(again) && /earlier line/.test(again.message));
});

test('JSONL across chunk boundaries: every line with its number; CRLF; a last line without newline; an overlong line by number', () => {
  const lines: SplitLine[] = [];
  const splitter = new LineSplitter(10, (line) => lines.push(line));
  for (const chunk of ['ab', 'c\r\nde', 'f\n\n0123456789AB', 'C\nlast']) splitter.push(Buffer.from(chunk));
  splitter.end();
  assert.deepEqual(lines, [
    { line: 1, text: 'abc' },
    { line: 2, text: 'def' },
    { line: 3, text: '' },
    { line: 4, text: undefined },
    { line: 5, text: 'last' },
  ]);
});

test('what an answer means for its line: kept (ok or not), or sent again after a wait', () => {
  const cases: [number, Record<string, string>, ReturnType<typeof lineVerdict>][] = [
    [200, {}, { kind: 'keep', ok: true }],
    [400, {}, { kind: 'keep', ok: false }],
    [404, {}, { kind: 'keep', ok: false }],
    [500, {}, { kind: 'keep', ok: false }],
    [429, { 'x-should-retry': 'false' }, { kind: 'keep', ok: false }],
    [429, { 'retry-after-ms': '2500' }, { kind: 'again', afterMs: 2_500 }],
    [429, { 'retry-after': '3' }, { kind: 'again', afterMs: 3_000 }],
    [429, { 'retry-after': '86400' }, { kind: 'again', afterMs: 60_000 }],
    [503, {}, { kind: 'again', afterMs: 1_000 }],
  ];
  for (const [status, headers, verdict] of cases)
    assert.deepEqual(lineVerdict(status, headers), verdict, `${status} ${JSON.stringify(headers)}`);
});

const view = (name: string, models: string[], status = 'healthy', slots?: number): NodeView =>
  ({
    spec: { name },
    health: { status },
    discovery: { phase: 'ok' },
    modelsById: new Map(models.map((m) => [m, { id: m, loaded: true }])),
    capacity: {
      role: 'single',
      host: undefined,
      models: slots === undefined ? {} : Object.fromEntries(models.map((m) => [m, { slots, ctx: 4096 }])),
    },
  }) as unknown as NodeView;

test('the pacing: free slots of healthy nodes with the model, none while anyone queues, never more own lines than slots', () => {
  const views = [
    view('a', ['m'], 'healthy', 4),
    view('b', ['m'], 'healthy', 2),
    view('c', ['m'], 'dead', 8),
    view('d', ['x'], 'healthy', 8),
  ];
  const inFlight = (node: string): number => ({ a: 1, b: 2 })[node] ?? 0;
  const room = (over: Partial<Parameters<typeof batchRoom>[0]>): number =>
    batchRoom({ model: 'm', views, inFlight, queued: 0, own: 0, cap: 64, ...over });
  assert.equal(room({}), 3, 'a has 3 free, b none; c is dead, d has no m');
  assert.equal(room({ queued: 1 }), 0, 'someone waits in the queue: no batch line');
  assert.equal(room({ own: 5 }), 1, 'own lines in flight bound it to the slots (6)');
  assert.equal(room({ cap: 2 }), 2, '[batch] max_in_flight');
  assert.equal(room({ model: 'alias' }), 1, 'a name no node lists: one at a time');
  assert.equal(room({ model: 'alias', own: 1 }), 0);
  assert.equal(
    batchRoom({ model: 'm', views: [view('u', ['m'])], inFlight: () => 0, queued: 0, own: 0, cap: 64 }),
    UNKNOWN_SLOTS,
  );
});

test('the pacing on nodes of unknown slots: [batch] unknown_node_slots each, none on a node whose own figures say it queues', () => {
  // v and w list m without capacity figures (vLLM, SGLang); k's slots are known.
  const views = [view('v', ['m']), view('w', ['m']), view('k', ['m'], 'healthy', 2)];
  const inFlight = (node: string): number => ({ v: 1, w: 0, k: 2 })[node] ?? 0;
  const room = (over: Partial<Parameters<typeof batchRoom>[0]>): number =>
    batchRoom({ model: 'm', views, inFlight, queued: 0, own: 0, cap: 64, ...over });
  assert.equal(room({}), 2 * UNKNOWN_SLOTS - 1, 'the default: 4 each, less what is in flight there');
  assert.equal(room({ unknownSlots: 1 }), 1, 'one each: v is full (its one request), w has one');
  assert.equal(room({ unknownSlots: 1, own: 2 }), 1, 'own lines bound by the slots counted (1 + 1 + 2)');
  const waiting = (figures: Record<string, number | undefined>) => (node: string) => figures[node];
  assert.equal(room({ waitingInside: waiting({ v: 0, w: 0 }) }), 2 * UNKNOWN_SLOTS - 1, 'nothing waits inside: as counted');
  assert.equal(room({ waitingInside: waiting({ v: 0, w: 3 }) }), UNKNOWN_SLOTS - 1, 'w queues inside itself: no room there');
  assert.equal(room({ waitingInside: waiting({ v: undefined, w: 2 }) }), UNKNOWN_SLOTS - 1, 'no fresh figures for v: as counted');
  assert.equal(
    batchRoom({
      model: 'm',
      views: [view('k', ['m'], 'healthy', 4)],
      inFlight: () => 0,
      queued: 0,
      own: 0,
      cap: 64,
      waitingInside: () => 5,
    }),
    4,
    'known slots: the gateway’s own count rules (it queues for the node itself)',
  );
});

test('a job’s next step', () => {
  const counts = (waiting: number, sent: number) => ({ waiting, sent, done: 0, failed: 0 });
  const job = { status: 'in_progress' as const, expiresMs: 1_000, cancellingMs: null, ending: null };
  assert.deepEqual(jobStep(job, counts(3, 1), 500), { kind: 'run' });
  assert.deepEqual(jobStep(job, counts(3, 1), 1_000), { kind: 'expire' });
  assert.deepEqual(jobStep(job, counts(0, 1), 500), { kind: 'wait' });
  assert.deepEqual(jobStep(job, counts(0, 0), 500), { kind: 'finalize', ending: 'completed' });
  assert.deepEqual(jobStep({ ...job, ending: 'expired' }, counts(0, 0), 2_000), { kind: 'finalize', ending: 'expired' });
  const cancelling = { status: 'cancelling' as const, expiresMs: 1_000, cancellingMs: 10, ending: 'cancelled' as const };
  assert.deepEqual(jobStep(cancelling, counts(0, 2), 500), { kind: 'wait' });
  assert.deepEqual(jobStep(cancelling, counts(0, 0), 500), { kind: 'finalize', ending: 'cancelled' });
  assert.deepEqual(jobStep({ ...job, status: 'finalizing', ending: 'completed' }, counts(0, 0), 5_000), {
    kind: 'finalize',
    ending: 'completed',
  });
});

test('completion windows and the [batch] table', () => {
  assert.equal(completionWindowMs('24h'), 86_400_000);
  assert.equal(completionWindowMs('90m'), 5_400_000);
  assert.equal(completionWindowMs('7d'), 7 * 86_400_000);
  for (const bad of ['0h', '24', '31d', 24, '1w']) assert.equal(completionWindowMs(bad), undefined, String(bad));
  assert.deepEqual(batchSettings(undefined), BATCH_DEFAULTS);
  assert.equal(BATCH_DEFAULTS.unknownNodeSlots, UNKNOWN_SLOTS);
  const slots = batchSettings({ unknown_node_slots: 1 });
  assert.ok(!(slots instanceof BatchConfigProblem) && slots.unknownNodeSlots === 1);
  assert.ok(batchSettings({ unknown_node_slots: 0 }) instanceof BatchConfigProblem, 'at least one');
  const set = batchSettings({ max_file_bytes: '1MiB', retention: '48h', enabled: false });
  assert.ok(!(set instanceof BatchConfigProblem));
  assert.equal(set.maxFileBytes, 1024 * 1024);
  assert.equal(set.retentionMs, 2 * 86_400_000);
  assert.equal(set.enabled, false);
  const bad = batchSettings({ max_lines: 0, colour: 'blue' });
  assert.ok(bad instanceof BatchConfigProblem);
  assert.ok(
    bad.problems.some((p) => p.startsWith('batch.max_lines:')),
    bad.message,
  );
  assert.ok(
    bad.problems.some((p) => /unknown key/.test(p)),
    bad.message,
  );
});
