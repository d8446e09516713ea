// A routing snapshot's live readers over one node set: built when the set changes, shared by every
// snapshot taken from it (a snapshot keeps reading the set it was taken from, as before).

import type { LeaseTable } from './in-flight-counts.ts';
import type { RoutingSnapshot } from './node.ts';
import type { NodeRuntime } from './node-runtime.ts';

type SnapshotReaders = Pick<RoutingSnapshot, 'inFlight' | 'usage'> & {
  load(name: string): ReturnType<NonNullable<RoutingSnapshot['load']>>;
};

export function readersOf(active: ReadonlyMap<string, NodeRuntime>, leases: LeaseTable): SnapshotReaders {
  return {
    inFlight: (name) => active.get(name)?.inFlight ?? 0,
    usage: (name, model) => leases.usage(name, model),
    load: (name) => active.get(name)?.load,
  };
}
