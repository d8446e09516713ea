// The one book of model switches per node: a request that makes a router load its model, a
// reconciler load and an admin load or unload all take the same ticket, so at most one of them is
// under way on a node at a time (a reconciler load never overlaps a request's switch). The decision
// (`mayTake`) is pure; the book is a small interface so another store can hold it (issue 26 will
// share it between replicas); `SwitchTickets` is the in-process one.

import type { ModelAction } from '#src/kinds/index.ts';

/** Who took a ticket. */
export type SwitchHolder = 'request' | 'reconciler' | 'admin';

export interface SwitchTicket {
  /** The model the ticket loads, or unloads (`action`). */
  readonly model: string;
  readonly action: ModelAction;
  readonly by: SwitchHolder;
  /** A load answered (a request's answer head came, or the manager confirmed it). */
  readonly loaded: boolean;
  /** The idle model the gateway unloads first to make room (a full router); undefined = none. */
  readonly victim: string | undefined;
}

export type TakeVerdict = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** Pure: whether `ask` may take the node's ticket while `current` holds it. One at a time, whoever asks. */
export function mayTake(current: SwitchTicket | undefined, ask: Pick<SwitchTicket, 'model' | 'action' | 'by'>): TakeVerdict {
  if (current === undefined) return { ok: true };
  const what = current.action === 'unload' ? `unloading ${current.model}` : current.loaded ? `switching to ${current.model} (loaded, the listing catching up)` : `loading ${current.model}`;
  const whose = current.by === 'request' ? 'for a request' : current.by === 'reconciler' ? 'for the reconciler' : 'for an admin';
  return { ok: false, reason: `a switch is under way on this node: ${what} ${whose}; one at a time (asked: ${ask.action} ${ask.model} for ${ask.by === 'request' ? 'a request' : ask.by})` };
}

/** Where the tickets are kept: the scheduler and the model manager share one. */
export interface SwitchBook {
  current(node: string): SwitchTicket | undefined;
  /** Takes the node's ticket when `mayTake` allows; the verdict says why not. */
  take(node: string, ticket: SwitchTicket): TakeVerdict;
  /** Marks the node's ticket for `model` loaded (its followers may go). */
  markLoaded(node: string, model: string): void;
  /** Gives the node's ticket back if `model`'s ticket holds it. */
  release(node: string, model: string): void;
  /** The nodes holding a ticket now. */
  held(): readonly (readonly [node: string, ticket: SwitchTicket])[];
}

export class SwitchTickets implements SwitchBook {
  readonly #tickets = new Map<string, SwitchTicket>();

  current(node: string): SwitchTicket | undefined {
    return this.#tickets.get(node);
  }

  take(node: string, ticket: SwitchTicket): TakeVerdict {
    const verdict = mayTake(this.#tickets.get(node), ticket);
    if (verdict.ok) this.#tickets.set(node, ticket);
    return verdict;
  }

  markLoaded(node: string, model: string): void {
    const ticket = this.#tickets.get(node);
    if (ticket?.model === model && ticket.action === 'load') this.#tickets.set(node, { ...ticket, loaded: true });
  }

  release(node: string, model: string): void {
    if (this.#tickets.get(node)?.model === model) this.#tickets.delete(node);
  }

  held(): readonly (readonly [string, SwitchTicket])[] {
    return [...this.#tickets];
  }
}
