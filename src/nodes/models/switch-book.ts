// The one book of model switches per node: a request that makes a router load its model, a
// reconciler load and an admin load or unload all take the same ticket, so at most one of them is
// under way on a node at a time (a reconciler load never overlaps a request's switch). The decision
// (`mayTake`) is pure; the book is a small interface so another store can hold it; `SwitchTickets`
// is the in-process one, shared across replicas with [cluster] (cluster/shared-switches.ts).

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
  /** The replica whose switch this is, when another replica holds the node's claim ([cluster]); absent = this one. */
  readonly replica?: string;
  /** [cluster]: another replica's switch already released, kept until this replica's listing shows what it did. */
  readonly settled?: boolean;
}

export type TakeVerdict = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** Pure: whether `ask` may take the node's ticket while `current` holds it. One at a time, whoever asks. */
export function mayTake(current: SwitchTicket | undefined, ask: Pick<SwitchTicket, 'model' | 'action' | 'by'>): TakeVerdict {
  if (current === undefined) return { ok: true };
  const what =
    current.action === 'unload'
      ? `unloading ${current.model}`
      : current.loaded || current.settled === true
        ? `switching to ${current.model} (${current.loaded ? 'loaded' : 'its load failed'}, the listing catching up)`
        : `loading ${current.model}`;
  const by = current.by === 'request' ? 'for a request' : current.by === 'reconciler' ? 'for the reconciler' : 'for an admin';
  const whose = current.replica === undefined ? by : `${by} on replica ${current.replica}`;
  return {
    ok: false,
    reason: `a switch is under way on this node: ${what} ${whose}; one at a time (asked: ${ask.action} ${ask.model} for ${ask.by === 'request' ? 'a request' : ask.by})`,
  };
}

/** Where the tickets are kept: the scheduler and the model manager share one. */
export interface SwitchBook {
  /**
   * True while no node holds a ticket here and no other replica's can be seen (no [cluster]): every
   * `current` is undefined, so a reader may skip asking per node (a lease return does). Absent: ask.
   */
  readonly quiet?: boolean;
  current(node: string): SwitchTicket | undefined;
  /** Takes the node's ticket when `mayTake` allows; the verdict says why not. */
  take(node: string, ticket: SwitchTicket): TakeVerdict;
  /** Marks the node's ticket for `model` loaded (its followers may go). */
  markLoaded(node: string, model: string): void;
  /** Gives the node's ticket back if `model`'s ticket holds it. */
  release(node: string, model: string): void;
  /** The nodes holding a ticket now. */
  held(): readonly (readonly [node: string, ticket: SwitchTicket])[];
  /**
   * [cluster]: confirms a ticket just taken across replicas before its switch starts (refused: the
   * ticket is given back, another replica's claim holds the node). Undefined: nothing to wait for.
   */
  confirm?(node: string, model: string): Promise<TakeVerdict> | undefined;
  /** [cluster]: models on `node` other replicas hold slot leases on (a switch found them in use): never a victim. */
  busyElsewhere?(node: string): ReadonlySet<string>;
  /** [cluster]: this replica's listing of `node` shows what another replica's released switch did: it no longer counts. */
  caughtUp?(node: string): void;
}

/** What a claim across replicas answered: taken (undefined), held by another replica's switch, or its victim in use elsewhere. */
export type ClaimAnswer =
  | undefined
  | { readonly kind: 'held'; readonly ticket: SwitchTicket }
  | { readonly kind: 'victim_busy'; readonly victim: string; readonly replicas: readonly string[] };

/** [cluster]: the other replicas' claims, and this replica's own kept in the shared store. */
export interface SwitchSharing {
  /** Another replica's switch on `node`, as last seen. */
  remote(node: string): SwitchTicket | undefined;
  remoteHeld(): readonly (readonly [string, SwitchTicket])[];
  /** Claims `node` for `ticket` (undefined = claimed). */
  claim(node: string, ticket: SwitchTicket): Promise<ClaimAnswer>;
  update(node: string, ticket: SwitchTicket): void;
  release(node: string): void;
  busyElsewhere(node: string): ReadonlySet<string>;
  caughtUp(node: string): void;
}

/** Pure: why a claim across replicas was refused. */
export function refusalOf(answer: Exclude<ClaimAnswer, undefined>, ask: SwitchTicket): TakeVerdict {
  if (answer.kind === 'held') return mayTake(answer.ticket, ask);
  const where = answer.replicas.length === 0 ? 'another replica' : `replica ${answer.replicas.join(', ')}`;
  return {
    ok: false,
    reason: `the idle model ${answer.victim} this switch would unload is in use on ${where}; waits for it to go idle there (asked: ${ask.action} ${ask.model})`,
  };
}

const NOTHING: ReadonlySet<string> = new Set();

export class SwitchTickets implements SwitchBook {
  readonly #tickets = new Map<string, SwitchTicket>();
  #sharing: SwitchSharing | undefined;
  /** See SwitchBook.quiet: a field, not a getter (read on every lease return); only this class writes it. */
  quiet = true;

  /** [cluster]: from now on other replicas' claims count, and this one's are kept in the store. */
  share(sharing: SwitchSharing): void {
    this.#sharing = sharing;
    this.#noteQuiet();
  }

  current(node: string): SwitchTicket | undefined {
    return this.#tickets.get(node) ?? this.#sharing?.remote(node);
  }

  confirm(node: string, model: string): Promise<TakeVerdict> | undefined {
    const sharing = this.#sharing;
    const mine = this.#tickets.get(node);
    if (sharing === undefined || mine?.model !== model) return undefined;
    return sharing.claim(node, mine).then((answer) => {
      if (answer === undefined) {
        if (this.#tickets.get(node) !== mine) sharing.release(node);
        return { ok: true } as const;
      }
      if (this.#tickets.get(node) === mine) this.#tickets.delete(node);
      this.#noteQuiet();
      return refusalOf(answer, mine);
    });
  }

  busyElsewhere(node: string): ReadonlySet<string> {
    return this.#sharing?.busyElsewhere(node) ?? NOTHING;
  }

  caughtUp(node: string): void {
    this.#sharing?.caughtUp(node);
  }

  take(node: string, ticket: SwitchTicket): TakeVerdict {
    const verdict = mayTake(this.current(node), ticket);
    if (verdict.ok) this.#tickets.set(node, ticket);
    this.#noteQuiet();
    return verdict;
  }

  markLoaded(node: string, model: string): void {
    const ticket = this.#tickets.get(node);
    if (ticket?.model !== model || ticket.action !== 'load') return;
    const loaded = { ...ticket, loaded: true };
    this.#tickets.set(node, loaded);
    this.#sharing?.update(node, loaded);
  }

  release(node: string, model: string): void {
    if (this.#tickets.get(node)?.model !== model) return;
    this.#tickets.delete(node);
    this.#noteQuiet();
    this.#sharing?.release(node);
  }

  #noteQuiet(): void {
    this.quiet = this.#tickets.size === 0 && this.#sharing === undefined;
  }

  held(): readonly (readonly [string, SwitchTicket])[] {
    const remote = (this.#sharing?.remoteHeld() ?? []).filter(([node]) => !this.#tickets.has(node));
    return [...this.#tickets, ...remote];
  }
}
