// A worker's request-path events reach the owner's bus in order, once each, with the model label
// bounded by the owner.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventBus } from '#src/core/events.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import { forwardEvents, replayEvents } from '#src/workers/event-bridge.ts';
import type { WorkerMessage } from '#src/workers/protocol.ts';

test('what one tick emits goes out as one message, and replays on the owner with bounded labels', async () => {
  const workerBus = new EventBus<ProxyEvents>();
  const sent: WorkerMessage[] = [];
  forwardEvents(workerBus, (m) => sent.push(m));
  workerBus.emit('proxy:queue-wait', { model: 'secret-probe-name', waitedMs: 5, admitted: true });
  workerBus.emit('proxy:unroutable', { answer: 'no_healthy_node' });
  assert.equal(sent.length, 0, 'batched until the tick ends');
  await Promise.resolve();
  assert.equal(sent.length, 1);

  const ownerBus = new EventBus<ProxyEvents>();
  const seen: unknown[] = [];
  ownerBus.on('proxy:queue-wait', (e) => seen.push(e));
  ownerBus.on('proxy:unroutable', (e) => seen.push(e));
  const message = sent[0];
  assert.ok(message?.t === 'events');
  replayEvents(ownerBus, message.events, (model) => (model === 'm' ? 'm' : '_unknown'));
  assert.deepEqual(seen, [{ model: '_unknown', waitedMs: 5, admitted: true }, { answer: 'no_healthy_node' }]);
});
