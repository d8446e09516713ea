// [cluster]: the session table shared through the store (routing/policies/session-table.ts), so
// that a session moved by one replica, or an answer one replica passed on, is known to the others:
// an entry placed, moved or learnt is written with `[routing] session_ttl` (plain keys, SET PX), and
// one a replica does not hold is read before its request is routed (GET, within the store's call
// timeout). A store error is logged once per change of state and leaves the local table as it is:
// it never fails a request.

import type { SessionShare } from '#src/routing/index.ts';

/** What the sessions need of the store (redis-store.ts). */
export interface SessionStore {
  putSession(key: number, target: string, ttlMs: number): Promise<void>;
  getSession(key: number): Promise<string | undefined>;
}

/** What the sessions log to (a pino Logger is one). */
export interface SessionLog {
  warn(fields: object, message: string): void;
  info(message: string): void;
}

export class SharedSessions implements SessionShare {
  readonly #store: SessionStore;
  readonly #logger: SessionLog;
  /** The last call failed: the next failure is not logged again, the next success is. */
  #failing = false;

  constructor(store: SessionStore, logger: SessionLog) {
    this.#store = store;
    this.#logger = logger;
  }

  put(key: number, target: string, ttlMs: number): void {
    this.#store.putSession(key, target, ttlMs).then(
      () => this.#answered(),
      (error: unknown) => this.#failed(error, 'written'),
    );
  }

  get(key: number): Promise<string | undefined> {
    return this.#store.getSession(key).then(
      (target) => {
        this.#answered();
        return target;
      },
      (error: unknown) => {
        this.#failed(error, 'read');
        return undefined;
      },
    );
  }

  #answered(): void {
    if (!this.#failing) return;
    this.#failing = false;
    this.#logger.info('sessions are shared through the cluster store again');
  }

  #failed(error: unknown, what: string): void {
    if (this.#failing) return;
    this.#failing = true;
    const reason = error instanceof Error ? error.message : String(error);
    this.#logger.warn({ error: reason }, `a session could not be ${what} in the cluster store: this replica keeps its own table`);
  }
}
