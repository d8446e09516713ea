// The shape every listener serves: path → method → handler. The public table (proxy/) and the
// admin table (admin/) are built apart and merged only where one listener serves both.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TargetUrl } from '#src/core/request-target.ts';

export type Handler = (req: IncomingMessage, res: ServerResponse, url: TargetUrl) => Promise<void> | void;

/**
 * path → method → handler. A key ending in `/*` (see `subtree`) serves every path below it, e.g.
 * `/v1/models/*` answers `/v1/models/meta-llama/Llama-3-8B`; no other key matches more than itself.
 */
export type EndpointTable = ReadonlyMap<string, ReadonlyMap<string, Handler>>;

/** The table key serving every path below `prefix` (which ends in `/`). */
export function subtree(prefix: string): string {
  return `${prefix}*`;
}

/** The methods serving `pathname`: its own entry, else the nearest subtree entry above it. */
export function lookupPath(table: EndpointTable, pathname: string): ReadonlyMap<string, Handler> | undefined {
  const exact = table.get(pathname);
  if (exact !== undefined) return exact;
  for (let slash = pathname.lastIndexOf('/'); slash >= 0; slash = slash === 0 ? -1 : pathname.lastIndexOf('/', slash - 1)) {
    const below = table.get(subtree(pathname.slice(0, slash + 1)));
    if (below !== undefined) return below;
  }
  return undefined;
}

export class TableBuilder {
  readonly #table = new Map<string, Map<string, Handler>>();

  add(method: string, path: string, handler: Handler): void {
    const byMethod = this.#table.get(path) ?? new Map<string, Handler>();
    byMethod.set(method, handler);
    this.#table.set(path, byMethod);
  }

  table(): EndpointTable {
    return this.#table;
  }
}

/** One table from several; a later table's path replaces an earlier one's (all of its methods). */
export function mergeTables(...tables: readonly EndpointTable[]): EndpointTable {
  const out = new Map<string, ReadonlyMap<string, Handler>>();
  for (const table of tables) for (const [path, byMethod] of table) out.set(path, byMethod);
  return out;
}
