import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { EventBus } from '#src/core/events.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import type { RouteRequest, RoutingDecision } from '#src/routing/index.ts';
import { publishNotice } from '#src/logs/scheduler-notices.ts';

const req = {
  model: 'm',
  group: undefined,
  triedNodes: new Set<string>(),
  promptTokens: 10,
  maxTokens: 5,
  completionReserveTokens: 0,
  loadOnDemand: false,
  policy: 'least-in-flight',
} as RouteRequest;

function sinks(): { events: EventBus<ProxyEvents>; seen: ProxyEvents['route:excluded'][]; labels: string[] } {
  const events = new EventBus<ProxyEvents>();
  const seen: ProxyEvents['route:excluded'][] = [];
  const labels: string[] = [];
  events.on('route:excluded', (e) => seen.push(e));
  return { events, seen, labels };
}

test('a decision that excluded no node publishes nothing and labels nothing', () => {
  const s = sinks();
  const decision = { kind: 'unroutable', excluded: [] } as RoutingDecision;
  publishNotice(
    { events: s.events, label: (m) => (s.labels.push(m), m), logger: pino({ enabled: false }) },
    { kind: 'decided', req, decision },
  );
  assert.deepEqual(s.seen, []);
  assert.deepEqual(s.labels, []);
});

test('a decision with exclusions publishes them under the model label', () => {
  const s = sinks();
  const excluded: RoutingDecision['excluded'] = [{ node: 'a', filter: 'prefer-healthy', code: 'dead' }];
  publishNotice(
    { events: s.events, label: (m) => `label:${m}`, logger: pino({ enabled: false }) },
    { kind: 'decided', req, decision: { kind: 'unroutable', excluded } },
  );
  assert.deepEqual(s.seen, [{ model: 'label:m', excluded }]);
});
