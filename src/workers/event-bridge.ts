// The request path's events cross to the owner, where metrics, passive health, the dashboard and the
// transition logs listen, as they would in one thread. A worker batches what one tick emits into one
// message; the owner re-emits each event on its own bus, with the model label bounded there, where
// the one label set is kept (a worker emits the model id as it is).

import type { EventBus } from '#src/core/events.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import type { EventRecord, WorkerMessage } from './protocol.ts';

export const PROXY_EVENT_NAMES = [
  'proxy:attempt',
  'proxy:request-finished',
  'route:excluded',
  'proxy:context-rejected',
  'proxy:unroutable',
  'route:model-switch',
  'proxy:queue-wait',
  'proxy:tenant-limited',
  'mesh:forwarded',
  'mesh:forwarded-in',
  'mesh:site-reachability',
] as const satisfies readonly (keyof ProxyEvents)[];

// A new proxy event that is not in the list above fails to compile here.
type Unforwarded = Exclude<keyof ProxyEvents, (typeof PROXY_EVENT_NAMES)[number]>;
export const EVERY_PROXY_EVENT_FORWARDED: [Unforwarded] extends [never] ? true : never = true;

/** Worker side: everything emitted on `bus` goes to the owner, one message per tick. */
export function forwardEvents(bus: EventBus<ProxyEvents>, send: (message: WorkerMessage) => void): void {
  const pending: EventRecord[] = [];
  const flush = (): void => {
    send({ t: 'events', events: pending.splice(0) });
  };
  for (const name of PROXY_EVENT_NAMES) {
    bus.on(name, (payload) => {
      pending.push([name, payload] as EventRecord);
      if (pending.length === 1) queueMicrotask(flush);
    });
  }
}

/** Owner side: a worker's events, emitted on the owner's bus with bounded model labels. */
export function replayEvents(bus: EventBus<ProxyEvents>, events: readonly EventRecord[], label: (model: string) => string): void {
  for (const [name, payload] of events)
    emitOne(bus, name, 'model' in payload ? { ...payload, model: label(payload.model) } : payload);
}

function emitOne<K extends keyof ProxyEvents>(bus: EventBus<ProxyEvents>, name: K, payload: ProxyEvents[K]): void {
  bus.emit(name, payload);
}
