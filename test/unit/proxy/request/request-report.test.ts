import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import type { ProxyEvents } from '#src/proxy/request/proxy-events.ts';
import { setField, startRequestReport, whenFinished, type RequestReport } from '#src/proxy/request/request-report.ts';
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
