// What this site knows of every pinned remote site: the last accepted record and when it arrived
// (the receiver's monotonic clock), and the last rejection of each class (ordering or trust, shown
// until it ages out: rejection-class.ts). Judgements come from the acceptance function; a rejection
// is noted but never changes what was accepted. Which rejections are logged is rejection-log.ts's to
// decide; the highest revisions survive restarts through revision-state.ts.

import type { MeshSitePin } from '#src/mesh/config/mesh-config.ts';
import { REMEMBERED_MS, type RemoteModel, type RemoteSiteView } from '#src/routing/remote/remote-site.ts';
import { isFresh } from './freshness.ts';
import { sameModels } from './site-models.ts';
import type { Judgement, RecordRejection } from './judgement.ts';
import { rejectionClass, rejectionHeld, type RejectionClass } from './rejection-class.ts';
import type { SiteRecord, SiteRecordLoad, SiteRecordModel } from './site-record.ts';
import type { HeldRevision } from './revision-state.ts';

export interface SiteRejection {
  readonly reason: RecordRejection;
  readonly detail: string;
  readonly peer: string;
  /** Receiver's monotonic ms. */
  readonly at: number;
}

interface SiteState {
  /** What the site is pinned by: its key, and its url when one is pinned. A change starts the site over. */
  readonly pin: string;
  /** The pinned public key alone (what a held revision is kept under). */
  readonly key: string;
  highestRevision: number | undefined;
  /** The last accepted record, its models filled in (a heartbeat's from the list it named). */
  record: SiteRecord | undefined;
  acceptedAt: number | undefined;
  models: ReadonlyMap<string, RemoteModel>;
  /** The digest of `record.models` and that list, for heartbeats that name it. */
  digest: { readonly value: string; readonly models: readonly SiteRecordModel[] } | undefined;
  load: number;
  /** The last rejection of each class (two at most), shown while `rejectionHeld`. */
  readonly rejections: Map<RejectionClass, SiteRejection>;
}

export type StoreOutcome =
  | { readonly kind: 'accepted'; readonly site: string; readonly full: boolean; readonly modelsChanged: boolean }
  | {
      readonly kind: 'rejected';
      readonly reason: RecordRejection;
      readonly site: string | undefined;
      readonly detail: string;
    };

/** (in_flight + queued) per slot: lower is better; 0 when the record says nothing usable. */
export function loadScore(load: SiteRecordLoad | undefined): number {
  if (load === undefined) return 0;
  const busy = finite(load.in_flight) + finite(load.queued);
  return busy / Math.max(1, finite(load.slots));
}

function finite(n: unknown): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0;
}

export class RemoteSiteStore {
  readonly #sites = new Map<string, SiteState>();
  readonly #digestOf: (models: readonly SiteRecordModel[]) => string;

  constructor(options: {
    ownSite: string;
    pins: readonly MeshSitePin[];
    digestOf: (models: readonly SiteRecordModel[]) => string;
  }) {
    this.#digestOf = options.digestOf;
    this.setPins(options.pins, options.ownSite);
  }

  /**
   * Applies a reload's pins: a site no longer pinned is forgotten, a re-keyed (or re-pinned url) one
   * starts over (what the old pin admitted proves nothing now); the others keep what they learned.
   */
  setPins(pins: readonly MeshSitePin[], ownSite: string): void {
    const wanted = new Map(pins.filter((p) => p.id !== ownSite).map((p) => [p.id, p]));
    for (const [site, state] of this.#sites) {
      const pin = wanted.get(site);
      if (pin === undefined || pinOf(pin) !== state.pin) this.#sites.delete(site);
    }
    for (const [site, pin] of wanted) {
      if (!this.#sites.has(site)) this.#sites.set(site, emptyState(pinOf(pin), pin.publicKey));
    }
  }

  /** Revisions held from before a restart (already matched to the pinned keys): replays below them are refused. */
  restore(revisions: ReadonlyMap<string, number>): void {
    for (const [site, revision] of revisions) {
      const state = this.#sites.get(site);
      if (state !== undefined && (state.highestRevision === undefined || revision > state.highestRevision))
        state.highestRevision = revision;
    }
  }

  /** The highest revision accepted from each site, under the key it was pinned with (for the state file). */
  heldRevisions(): Map<string, HeldRevision> {
    return new Map(
      [...this.#sites].flatMap(([site, s]) =>
        s.highestRevision === undefined ? [] : [[site, { key: s.key, revision: s.highestRevision }] as const],
      ),
    );
  }

  /** For the acceptance function: the highest accepted revision of a site. */
  highestRevision(site: string): number | undefined {
    return this.#sites.get(site)?.highestRevision;
  }

  /** For the acceptance function: the model list a heartbeat's digest names, when held. */
  knownModels(site: string, digest: string): readonly SiteRecordModel[] | undefined {
    const held = this.#sites.get(site)?.digest;
    return held !== undefined && held.value === digest ? held.models : undefined;
  }

  apply(judgement: Judgement, peer: string, nowMs: number): StoreOutcome {
    if (judgement.kind === 'rejected') {
      const { reason, site, detail } = judgement;
      const state = site === undefined ? undefined : this.#sites.get(site);
      if (state !== undefined) noteRejection(state, { reason, detail, peer, at: nowMs });
      return { kind: 'rejected', reason, site, detail };
    }
    const record = judgement.record;
    const state = this.#sites.get(record.site);
    // The acceptance function checks pins too; this guards a pin removed between judge and apply.
    if (state === undefined)
      return { kind: 'rejected', reason: 'not_pinned', site: record.site, detail: `site '${record.site}' is not pinned` };
    if (state.highestRevision !== undefined && record.revision <= state.highestRevision) {
      const detail = `revision ${record.revision} <= ${state.highestRevision}`;
      noteRejection(state, { reason: 'replay', detail, peer, at: nowMs });
      return { kind: 'rejected', reason: 'replay', site: record.site, detail };
    }
    const models = record.models ?? [];
    const full = record.models_digest === undefined;
    const previous = state.record?.models;
    const modelsChanged = previous === undefined || !sameModels(previous, models);
    state.highestRevision = record.revision;
    state.record = record;
    state.acceptedAt = nowMs;
    if (modelsChanged || state.digest === undefined) {
      state.models = new Map(models.map((m) => [m.id, { ctx: m.ctx, onDemand: m.on_demand === true }]));
      state.digest = { value: record.models_digest ?? this.#digestOf(models), models };
    }
    state.load = loadScore(record.load);
    return { kind: 'accepted', site: record.site, full, modelsChanged };
  }

  /** Every pinned remote site, fresh or stale (and then whether still remembered: REMEMBERED_MS), for routing. */
  views(nowMs: number, freshnessMs: number): RemoteSiteView[] {
    return [...this.#sites].map(([id, s]) => {
      const fresh = isFresh(s.acceptedAt, nowMs, freshnessMs);
      const view = { id, url: s.record?.url, fresh, models: s.models, load: s.load };
      return !fresh && isFresh(s.acceptedAt, nowMs, REMEMBERED_MS) ? { ...view, remembered: true } : view;
    });
  }

  /** When each pinned site's last record was accepted (for freshness timers). */
  acceptedTimes(): Map<string, number | undefined> {
    return new Map([...this.#sites].map(([id, s]) => [id, s.acceptedAt]));
  }

  /**
   * The /admin/sites rows: every pinned remote site with what is known, its last rejection still
   * held (either class), and its last trust failure still held (a later ordering rejection never hides it).
   */
  adminRows(nowMs: number, freshnessMs: number): SiteAdminRow[] {
    return [...this.#sites].map(([id, s]) => {
      const held = [...s.rejections.values()]
        .filter((r) => rejectionHeld(r.reason, r.at, nowMs))
        .map((r) => shownRejection(r, nowMs));
      return {
        id,
        fresh: isFresh(s.acceptedAt, nowMs, freshnessMs),
        url: s.record?.url,
        revision: s.highestRevision,
        age_ms: s.acceptedAt === undefined ? undefined : Math.max(0, nowMs - s.acceptedAt),
        models: s.record?.models ?? [],
        load: s.record?.load,
        load_score: s.load,
        // The newest: noted last (`rejections` is kept in the order noted), the youngest.
        last_rejection: held.reverse().sort((a, b) => a.age_ms - b.age_ms)[0],
        last_trust_failure: held.find((r) => r.class === 'trust'),
      };
    });
  }
}

/** A held rejection as /admin/sites shows it: its class, and its age by the receiver's clock. */
export interface ShownRejection {
  readonly reason: RecordRejection;
  readonly class: RejectionClass;
  readonly detail: string;
  readonly peer: string;
  readonly age_ms: number;
}

function shownRejection(r: SiteRejection, nowMs: number): ShownRejection {
  return { reason: r.reason, class: rejectionClass(r.reason), detail: r.detail, peer: r.peer, age_ms: Math.max(0, nowMs - r.at) };
}

export interface SiteAdminRow {
  readonly id: string;
  readonly fresh: boolean;
  readonly url: string | undefined;
  readonly revision: number | undefined;
  readonly age_ms: number | undefined;
  readonly models: readonly SiteRecordModel[];
  readonly load: SiteRecordLoad | undefined;
  readonly load_score: number;
  /** The latest rejection of either class not yet aged out (rejection-class.ts). */
  readonly last_rejection: ShownRejection | undefined;
  /** The latest trust failure not yet aged out (the same as `last_rejection` when that is one). */
  readonly last_trust_failure: ShownRejection | undefined;
}

/** Keeps a site's last rejection of its class, the map in the order they were noted. */
function noteRejection(state: SiteState, rejection: SiteRejection): void {
  const kind = rejectionClass(rejection.reason);
  state.rejections.delete(kind);
  state.rejections.set(kind, rejection);
}

function pinOf(pin: MeshSitePin): string {
  return `${pin.publicKey} ${pin.url ?? ''}`;
}

function emptyState(pin: string, key: string): SiteState {
  return {
    pin,
    key,
    highestRevision: undefined,
    record: undefined,
    acceptedAt: undefined,
    models: new Map(),
    digest: undefined,
    load: 0,
    rejections: new Map(),
  };
}
