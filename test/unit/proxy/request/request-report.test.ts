import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import type { ProxyEvents } from '#src/proxy/request/proxy-events.ts';
import {
  clientRequestId,
  MAX_REQUEST_ID_LENGTH,
  newRequestIds,
  requestIdFor,
  setField,
  startRequestReport,
  whenFinished,
  type RequestReport,
} from '#src/proxy/request/request-report.ts';
import { FORWARDED_FROM } from '#src/core/forwarded-from.ts';
import { fieldKey } from '#src/core/request-fields.ts';

type Finished = ProxyEvents['proxy:request-finished'];

function reportWith(): { report: RequestReport; events: Finished[]; order: string[] } {
  const bus = new EventBus<ProxyEvents>();
  const events: Finished[] = [];
  const order: string[] = [];
  bus.on('proxy:request-finished', (event) => {
    order.push('reported');
    events.push(event);
  });
  const deps = { clock: new ManualClock(), events: bus, modelLabel: (model: string) => model };
  return { report: startRequestReport(deps, '/v1/chat/completions', 0, { bytesWritten: 0 }), events, order };
}

test('no labels: the event has no tenant nor features’ fields at all', () => {
  const { report, events } = reportWith();
  report.finish('a', 200);
  assert.equal(events.length, 1);
  assert.equal(Object.hasOwn(events[0] ?? {}, 'tenant'), false);
  assert.equal(Object.hasOwn(events[0] ?? {}, 'fields'), false);
});

test("the caller's labels reach the event as they are; an unset one stays absent", () => {
  const { report, events } = reportWith();
  const fields = { [FORWARDED_FROM.name]: { site: 'eu', claimedTenant: 'x', claimedClass: undefined } };
  report.labels = { tenant: 't', fields };
  report.finish(undefined, 404);
  assert.equal(events[0]?.tenant, 't');
  assert.equal(events[0]?.fields, fields);
  const other = reportWith();
  other.report.labels = { tenant: 'default' };
  other.report.finish(undefined, 401);
  assert.equal(other.events[0]?.tenant, 'default');
  assert.equal(Object.hasOwn(other.events[0] ?? {}, 'fields'), false);
});

test('a feature’s own fields of the request join its caller’s, which stay as they were (shared by every request of the caller)', () => {
  const { report, events } = reportWith();
  const callers = Object.freeze({ mesh: { site: 'eu' } });
  report.labels = { tenant: 't', fields: callers };
  setField(report, fieldKey<string>('translation'), 'messages→chat');
  report.finish('n1', 200);
  assert.deepEqual(events[0]?.fields, { mesh: { site: 'eu' }, translation: 'messages→chat' });
  assert.deepEqual(callers, { mesh: { site: 'eu' } });
});

test('finished hooks run once, in the order added, before the event, with the usage kept and what finish was told', () => {
  const { report, events, order } = reportWith();
  const usage = { promptTokens: 3, completionTokens: 4, counted: 'usage' as const };
  whenFinished(report, (status, node, extra) => order.push(`first ${status} ${node} ${extra?.brokenError}`));
  whenFinished(report, (status) => order.push(`second ${status} ${report.usage?.completionTokens}`));
  report.finish('n1', 200, { usage, brokenError: 'cut' });
  report.finish('n2', 500);
  assert.deepEqual(order, ['first 200 n1 cut', 'second 200 4', 'reported']);
  assert.equal(events.length, 1);
  assert.equal(events[0]?.brokenError, 'cut');
});

// ---- the request id

const KEPT: readonly string[] = [
  'abc',
  'a1b2-c3',
  '0af7651916cd43dd8448eb211c80319c',
  'req_01HZX:7/2+=@x.y',
  'x'.repeat(MAX_REQUEST_ID_LENGTH),
];
const REPLACED: readonly (string | string[] | undefined)[] = [
  undefined,
  '',
  'two words',
  'a"b',
  'back\\slash',
  'tab\there',
  'new\nline',
  'x'.repeat(MAX_REQUEST_ID_LENGTH + 1),
  'grüße',
  'semi;colon',
  ['a', 'b'],
];

for (const id of KEPT) {
  test(`a client id ${JSON.stringify(id.slice(0, 40))} is kept`, () => {
    assert.equal(clientRequestId(id), id);
    assert.equal(
      requestIdFor(id, () => 'new'),
      id,
    );
  });
}

for (const header of REPLACED) {
  test(`a client id ${JSON.stringify(header)?.slice(0, 40)} is replaced by a new one`, () => {
    assert.equal(clientRequestId(header), undefined);
    assert.equal(
      requestIdFor(header, () => 'new'),
      'new',
    );
  });
}

/** A random UUID's text, version 4 and RFC 9562's variant (what crypto.randomUUID gives). */
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('the ids the gateway makes are random version-4 UUIDs, none twice, over many random fills', () => {
  const make = newRequestIds();
  const ids = Array.from({ length: 1000 }, make);
  for (const id of ids) assert.match(id, UUID_V4);
  assert.equal(new Set(ids).size, ids.length);
  // Each hex digit of the random part takes every value somewhere: the text is written from the fill, not fixed.
  for (const at of [0, 9, 20, 35]) assert.equal(new Set(ids.map((id) => id[at])).size, 16, `position ${at}`);
  // A second maker shares nothing with the first.
  const other = Array.from({ length: 200 }, newRequestIds());
  assert.equal(other.filter((id) => ids.includes(id)).length, 0);
});
