// The shape every listener serves: path → method → handler. The public table (proxy/) and the
// admin table (admin/) are built apart and merged only where one listener serves both.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TargetUrl } from '#src/core/request-target.ts';

/** A handler answers at once (void), or returns what it is waiting on: a promise, or an Answering. */
export type Handler = (req: IncomingMessage, res: ServerResponse, url: TargetUrl) => PromiseLike<void> | void;

/**
 * What a handler that answers through callbacks returns (the inference spine): awaitable like an
 * async handler's promise, without one of its own. The server only asks to be told of a failure
 * (`onFailure`, no promise); a promise is made only for one who awaits it (a forward's verification
 * waits for the request it serves). It ends once: answered, or failed.
 */
export class Answering implements PromiseLike<void> {
  #ended = false;
  #failure: { readonly error: unknown } | undefined;
  #onFailure: ((error: unknown) => void) | undefined;
  #awaited: PromiseWithResolvers<void> | undefined;

  /** Told of the failure (at once if it failed already); nothing is told of an answer. */
  onFailure(listener: (error: unknown) => void): void {
    if (this.#failure !== undefined) listener(this.#failure.error);
    else if (!this.#ended) this.#onFailure = listener;
  }

  then<A = void, B = never>(
    onFulfilled?: ((value: void) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): PromiseLike<A | B> {
    this.#awaited ??= this.#promised();
    return this.#awaited.promise.then(onFulfilled, onRejected);
  }

  /** The request is answered (or refused): its awaiters go on. */
  protected answered(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#awaited?.resolve();
  }

  /** The handler failed: the server answers it (500, or the connection cut), as it would a rejected promise. */
  protected failed(error: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#failure = { error };
    const listener = this.#onFailure;
    this.#onFailure = undefined;
    listener?.(error);
    this.#awaited?.reject(error);
  }

  #promised(): PromiseWithResolvers<void> {
    const awaited = Promise.withResolvers<void>();
    if (this.#failure !== undefined) awaited.reject(this.#failure.error);
    else if (this.#ended) awaited.resolve();
    return awaited;
  }
}

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
