// The Requests view's server side: the query read and checked (a bad value names its parameter),
// the filter it means, and the ring — newest first, bounded, the cursor, the record built lazily
// from the event with each attempt's routing decision.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventBus } from '#src/core/events.ts';
import { ManualClock } from '#src/core/clock.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import { readRequestQuery, recordMatches, statusMatches, type RequestQuery, type StatusFilter } from '#src/logs/request-query.ts';
import { RequestRing } from '#src/logs/request-ring.ts';
import type { RequestRecord } from '#src/logs/request-record.ts';

test('the query: defaults, bounds, and each bad value named', () => {
  const ok = readRequestQuery(new URLSearchParams(''));
  assert.ok('query' in ok);
  assert.deepEqual(ok.query, { limit: 100, after: 0, model: undefined, node: undefined, tenant: undefined, status: undefined });
  const table: [string, string | RequestQuery['status']][] = [
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=1.5', 'limit'],
    ['after=-3', 'after'],
    ['after=x', 'after'],
    ['status=20', 'status'],
    ['status=6xx', 'status'],
    ['status=ok', 'status'],
    [`model=${'m'.repeat(257)}`, 'model'],
    ['status=429', { exact: 429 }],
    ['status=5xx', { class: 5 }],
    ['status=4XX', { class: 4 }],
    ['status=error', { error: true }],
  ];
  for (const [text, want] of table) {
    const read = readRequestQuery(new URLSearchParams(text));
    if (typeof want === 'string') assert.equal('error' in read ? read.param : 'accepted', want, text);
    else assert.deepEqual('query' in read ? read.query.status : read, want, text);
  }
});

test('status filters', () => {
  const table: [StatusFilter, number, boolean][] = [
    [{ exact: 429 }, 429, true],
    [{ exact: 429 }, 428, false],
    [{ class: 2 }, 204, true],
    [{ class: 2 }, 302, false],
    [{ error: true }, 399, false],
    [{ error: true }, 400, true],
    [{ error: true }, 503, true],
  ];
  for (const [filter, status, want] of table)
    assert.equal(statusMatches(filter, status), want, `${JSON.stringify(filter)} ${status}`);
});

const record = (over: Partial<RequestRecord>): RequestRecord => ({
  seq: 5,
  time: '',
  request_id: 'r',
  endpoint: '/v1/chat/completions',
  attempts: [],
  status: 200,
  queue_wait_ms: 0,
  duration_ms: 1,
  bytes_in: 0,
  bytes_out: 0,
  ...over,
});
const q = (over: Partial<RequestQuery>): RequestQuery => ({
  limit: 100,
  after: 0,
  model: undefined,
  node: undefined,
  tenant: undefined,
  status: undefined,
  ...over,
});

test('the filter: model served or asked, node answering or attempted, tenant, cursor', () => {
  const r = record({
    model: 'm',
    model_requested: 'alias',
    node: 'b',
    tenant: 't',
    attempts: [
      { node: 'a', outcome: 'http_5xx' },
      { node: 'b', outcome: 'success' },
    ],
  });
  const table: [Partial<RequestQuery>, boolean][] = [
    [{}, true],
    [{ model: 'm' }, true],
    [{ model: 'alias' }, true],
    [{ model: 'x' }, false],
    [{ node: 'b' }, true],
    [{ node: 'a' }, true],
    [{ node: 'c' }, false],
    [{ tenant: 't' }, true],
    [{ tenant: 'u' }, false],
    [{ after: 4 }, true],
    [{ after: 5 }, false],
    [{ status: { error: true } }, false],
  ];
  for (const [over, want] of table) assert.equal(recordMatches(q(over), r), want, JSON.stringify(over));
  assert.equal(
    recordMatches(q({ node: 's1' }), record({ site: 's1', attempts: [{ site: 's1', outcome: 'success' }] })),
    true,
    'a site',
  );
});

const clock = new ManualClock();
const finished = (id: string, status = 200): ProxyEvents['proxy:request-finished'] => ({
  endpoint: '/v1/chat/completions',
  model: 'm',
  node: 'n1',
  status,
  durationMs: 3,
  firstByteMs: 1,
  brokenError: undefined,
  clientAborted: false,
  detail: {
    requestId: id,
    endedAt: 1_700_000_000_000,
    requestedModel: 'm',
    servedModel: 'm',
    queueWaitMs: 0,
    bytesIn: 1,
    bytesOut: 2,
    refusal: undefined,
    firstTokenMs: undefined,
    interTokenMs: undefined,
    attempts: [
      {
        target: 'n1',
        kind: 'node',
        outcome: 'success',
        status,
        route: {
          policy: 'least-in-flight',
          reason: 'fewest in flight (0, 1 tied)',
          scores: [{ node: 'n1', score: 0 }],
          excluded: [],
        },
      },
    ],
  },
});

test('the ring: newest first, bounded, the cursor, and each attempt with its routing', () => {
  const events = new EventBus<ProxyEvents>(() => undefined);
  const ring = new RequestRing(clock, events, 3);
  assert.deepEqual(ring.query(q({})), { requests: [], latest: 0, kept: 0, capacity: 3 });
  for (const id of ['a', 'b', 'c', 'd']) events.emit('proxy:request-finished', finished(id, id === 'c' ? 503 : 200));
  const all = ring.query(q({}));
  assert.deepEqual(
    all.requests.map((r) => [r.seq, r.request_id]),
    [
      [4, 'd'],
      [3, 'c'],
      [2, 'b'],
    ],
    'the oldest left the ring',
  );
  assert.equal(all.latest, 4);
  assert.equal(all.kept, 3);
  assert.deepEqual(all.requests[0]?.attempts[0], {
    node: 'n1',
    outcome: 'success',
    status: 200,
    route: {
      policy: 'least-in-flight',
      reason: 'fewest in flight (0, 1 tied)',
      scores: [{ node: 'n1', score: 0 }],
      excluded: [],
    },
  });
  assert.deepEqual(
    ring.query(q({ limit: 1 })).requests.map((r) => r.request_id),
    ['d'],
  );
  assert.deepEqual(
    ring.query(q({ after: 3 })).requests.map((r) => r.request_id),
    ['d'],
  );
  assert.deepEqual(
    ring.query(q({ status: { class: 5 } })).requests.map((r) => r.request_id),
    ['c'],
  );
  assert.equal(ring.query(q({})).requests[0], all.requests[0], 'a record is built once');
  ring.close();
  events.emit('proxy:request-finished', finished('e'));
  assert.equal(ring.query(q({})).latest, 4, 'closed: no longer fed');
});

test('the ring stores a request when read, at the time it finished', () => {
  const manual = new ManualClock(1_700_000_000_000);
  const events = new EventBus<ProxyEvents>(() => undefined);
  const ring = new RequestRing(manual, events);
  const { detail: _detail, ...bare } = finished('x');
  events.emit('proxy:request-finished', bare);
  manual.advance(60_000);
  assert.deepEqual(
    ring.query(q({})).requests.map((r) => r.time),
    [new Date(1_700_000_000_000).toISOString()],
  );
  ring.close();
});
