// The shape every listener serves: path → method → handler. The public table (proxy/) and the
// admin table (admin/) are built apart and merged only where one listener serves both.

import type { IncomingMessage, ServerResponse } from 'node:http';

export type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> | void;

/** path → method → handler. */
export type EndpointTable = ReadonlyMap<string, ReadonlyMap<string, Handler>>;

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
