// Which fleet changes can open room for queued requests: more capacity figures, a node whose health
// changed (back up, or woken), a new listing, or a node re-admitted after ejection. Each lets the
// head of every model's queue try again; a returned lease is reported to the scheduler directly.

import type { EventBus } from '#src/core/events.ts';
import type { RegistryEvents } from '#src/nodes/index.ts';

const ROOM_OPENING_EVENTS = ['node:capacity', 'node:health-changed', 'node:discovery', 'node:readmitted'] as const;

/** Subscribes `onChange` to the registry events that may let a waiting request through; returns the unsubscribe. */
export function onRoomMayOpen(events: EventBus<RegistryEvents>, onChange: () => void): () => void {
  const unsubscribes = ROOM_OPENING_EVENTS.map((name) => events.on(name, () => onChange()));
  return () => {
    for (const unsubscribe of unsubscribes) unsubscribe();
  };
}
