// The Kubernetes source's loop: open the API, list the Service's EndpointSlices (page by page), then
// watch from the list's resourceVersion. A watch the server ends is resumed from the last
// resourceVersion seen (an event's or a bookmark's); a watch or page answered 410 Gone lists again
// (the last good set is kept until the new list is whole). A failure (the API unreachable, an
// answer not of the protocol, a 403) is told with its reason and retried after a back-off (1 s,
// doubling to 60 s), resuming the watch where it was; the nodes are never emptied by it.

import type { Clock, Timer } from '#src/core/clock.ts';
import type { KubernetesNodeSourceSpec } from '#src/config/index.ts';
import type { KubeApi, KubeApiOpener } from './k8s-api.ts';
import { nodesFromSlices, type HeldBack } from './k8s-slices.ts';
import { applyWatchEvent, setFromPages, type ListPage, type SliceSet } from './k8s-watch.ts';
import type { SourcedNode } from './node-source.ts';

export interface FollowerEvents {
  /** The slices' nodes now (every good list and every event that moved the set). */
  nodes(nodes: readonly SourcedNode[], heldBack: HeldBack): void;
  /** The API answered as it should (a list, a watch opened). */
  answered(): void;
  failed(reason: string): void;
}

const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 60_000;
/** Pages of one list at most (100 slices each). */
const MAX_PAGES = 1_000;
/** Watches in a row the server ends with no event before one waits a back-off (no hot loop). */
const EMPTY_WATCHES = 3;

export class KubernetesFollower {
  readonly #spec: KubernetesNodeSourceSpec;
  readonly #clock: Clock;
  readonly #open: KubeApiOpener;
  readonly #events: FollowerEvents;
  readonly #lifetime = new AbortController();
  #api: KubeApi | undefined;
  #set: SliceSet | undefined;
  #failures = 0;
  #emptyWatches = 0;
  #relist = false;
  /** Relists in a row with no event read between them (a server that answers 410 to every fresh watch). */
  #idleRelists = 0;
  #timer: Timer | undefined;

  constructor(spec: KubernetesNodeSourceSpec, clock: Clock, open: KubeApiOpener, events: FollowerEvents) {
    this.#spec = spec;
    this.#clock = clock;
    this.#open = open;
    this.#events = events;
  }

  start(): void {
    void this.#run(() => this.#connect());
  }

  stop(): void {
    this.#lifetime.abort();
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#api?.close();
  }

  get #stopped(): boolean {
    return this.#lifetime.signal.aborted;
  }

  /** One step; whatever it throws is a failure with its reason (and the step is tried again later). */
  async #run(step: () => Promise<void>): Promise<void> {
    if (this.#stopped) return;
    try {
      await step();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.#fail(this.#api === undefined ? `EndpointSlices of ${this.#spec.namespace}/${this.#spec.service}: ${reason}` : reason);
    }
  }

  #later(step: () => Promise<void>, ms: number): void {
    if (this.#stopped) return;
    this.#timer = this.#clock.setTimeout(() => void this.#run(step), ms);
  }

  /** Told with its reason; tried again after the back-off (opening the API again if it never opened). */
  #fail(reason: string): void {
    if (this.#stopped) return;
    this.#failures += 1;
    this.#events.failed(reason);
    const retry = this.#api === undefined ? () => this.#connect() : () => this.#follow();
    this.#later(retry, Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.min(this.#failures - 1, 16)));
  }

  #answered(): void {
    this.#failures = 0;
    this.#events.answered();
  }

  async #connect(): Promise<void> {
    const api = await this.#open(this.#spec);
    if (this.#stopped) {
      api.close();
      return;
    }
    this.#api = api;
    await this.#follow();
  }

  /** List when there is no set (or a relist is due), then watch, again and again; a failure schedules the next try and returns. */
  async #follow(): Promise<void> {
    const api = this.#api;
    if (api === undefined) return;
    for (;;) {
      if (this.#stopped) return;
      if (this.#set === undefined || this.#relist) {
        if (!(await this.#list(api))) return;
        this.#relist = false;
      }
      const next = await this.#watch(api);
      if (next === 'stop') return;
      if (next === 'relist') {
        this.#relist = true;
        this.#idleRelists += 1;
        // Never a hot loop: the third relist in a row with nothing read between waits a back-off, told as a failure.
        if (this.#idleRelists >= EMPTY_WATCHES) {
          this.#idleRelists = 0;
          this.#fail(`${api.where}: every watch from a fresh list was answered 410 Gone`);
          return;
        }
      }
    }
  }

  /** Every page; true when the set is whole and told. */
  async #list(api: KubeApi): Promise<boolean> {
    const pages: (ListPage & { ok: true })[] = [];
    let token: string | undefined;
    let restarted = false;
    do {
      const page = await api.list(token, this.#lifetime.signal);
      if (this.#stopped) return false;
      if (!page.ok) {
        // A continue token that expired mid-list: the list starts over, once, from the top.
        if (page.gone && token !== undefined && !restarted) {
          restarted = true;
          pages.length = 0;
          token = undefined;
          continue;
        }
        this.#fail(`${api.where}: ${page.reason}`);
        return false;
      }
      pages.push(page);
      token = page.continue;
    } while (token !== undefined && pages.length < MAX_PAGES);
    if (token !== undefined) {
      this.#fail(`${api.where}: the list is longer than ${MAX_PAGES} pages`);
      return false;
    }
    this.#set = setFromPages(pages);
    this.#answered();
    this.#tell();
    return true;
  }

  /** One watch from the set's resourceVersion: what comes next. */
  async #watch(api: KubeApi): Promise<'again' | 'relist' | 'stop'> {
    const set = this.#set;
    if (set === undefined) return 'relist';
    const after: { next: 'resume' | 'relist' | 'fail'; reason: string; events: number } = {
      next: 'resume',
      reason: '',
      events: 0,
    };
    const end = await api.watch(
      set.resourceVersion,
      {
        onOpen: () => this.#answered(),
        onEvent: (event) => {
          if (this.#stopped || this.#set === undefined) return false;
          after.events += 1;
          const step = applyWatchEvent(this.#set, event);
          if (step.kind === 'set') {
            this.#idleRelists = 0;
            this.#set = step.set;
            if (step.changed) this.#tell();
            return true;
          }
          after.next = step.kind === 'relist' ? 'relist' : 'fail';
          after.reason = step.reason;
          return false;
        },
      },
      this.#lifetime.signal,
    );
    if (this.#stopped) return 'stop';
    if (after.next === 'relist' || end.kind === 'gone') return 'relist';
    if (after.next === 'fail' || end.kind === 'failed') {
      this.#fail(`${api.where}: ${after.next === 'fail' ? after.reason : end.kind === 'failed' ? end.reason : ''}`);
      return 'stop';
    }
    // Ended by the server, or broken after it opened: resume from the last resourceVersion. Several
    // in a row that brought nothing wait a pause first (a broken one is then told as a failure).
    this.#emptyWatches = after.events === 0 ? this.#emptyWatches + 1 : 0;
    if (this.#emptyWatches < EMPTY_WATCHES) return 'again';
    this.#emptyWatches = 0;
    if (end.kind === 'broken') this.#fail(`${api.where}: ${end.reason}`);
    else this.#later(() => this.#follow(), FIRST_BACKOFF_MS);
    return 'stop';
  }

  #tell(): void {
    if (this.#set === undefined) return;
    const { nodes, heldBack } = nodesFromSlices(this.#spec, this.#set.slices.values());
    this.#events.nodes(nodes, heldBack);
  }
}
