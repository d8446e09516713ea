import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import type { ProxyEvents } from '#src/proxy/request/proxy-events.ts';
import { startRequestReport, whenFinished, type RequestReport } from '#src/proxy/request/request-report.ts';

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

test('no labels: the event has no tenant nor peer field at all', () => {
  const { report, events } = reportWith();
  report.finish('a', 200);
  assert.equal(events.length, 1);
  assert.equal(Object.hasOwn(events[0] ?? {}, 'tenant'), false);
  assert.equal(Object.hasOwn(events[0] ?? {}, 'peer'), false);
});

test("the caller's labels reach the event as they are; an unset one stays absent", () => {
  const { report, events } = reportWith();
  const peer = { site: 'eu', claimedTenant: 'x', claimedClass: undefined };
  report.labels = { tenant: 't', peer };
  report.finish(undefined, 404);
  assert.equal(events[0]?.tenant, 't');
  assert.equal(events[0]?.peer, peer);
  const other = reportWith();
  other.report.labels = { tenant: 'default' };
  other.report.finish(undefined, 401);
  assert.equal(other.events[0]?.tenant, 'default');
  assert.equal(Object.hasOwn(other.events[0] ?? {}, 'peer'), false);
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
