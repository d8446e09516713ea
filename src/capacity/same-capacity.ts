// Pure: whether two capacity readings say the same, field by field. Polls usually repeat the same
// figures; the registry keeps the stored reading (and the routing views built on it) when they do.
// Models are compared as a set of ids, so the order a node lists them in does not count as a change.

import { sameFacts } from '#src/kinds/index.ts';
import type { ModelContext, NodeCapacity } from './node-capacity.ts';

export function sameCapacity(a: NodeCapacity, b: NodeCapacity): boolean {
  if (a === b) return true;
  return (
    a.role === b.role &&
    sameContext(a.host, b.host) &&
    sameModels(a.models, b.models) &&
    sameIds(a.loadedIds, b.loadedIds) &&
    a.router?.maxInstances === b.router?.maxInstances &&
    a.router?.autoload === b.router?.autoload &&
    sameFacts(a.server, b.server)
  );
}

function sameContext(a: ModelContext | undefined, b: ModelContext | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.nCtx === b.nCtx && a.slots === b.slots;
}

function sameModels(a: Readonly<Record<string, ModelContext>>, b: Readonly<Record<string, ModelContext>>): boolean {
  const ids = Object.keys(a);
  if (ids.length !== Object.keys(b).length) return false;
  return ids.every((id) => Object.hasOwn(b, id) && sameContext(a[id], b[id]));
}

/** In order: the kind reports what it has loaded as a list, and the list is kept as given. */
function sameIds(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.every((id, i) => id === b[i]);
}
