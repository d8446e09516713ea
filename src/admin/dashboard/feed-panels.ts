// The live feed's views that are not the hub's own: the Requests view (the ring of finished
// requests, read per client filter from its cursor on), the Tenants view (the tenants report, whose
// read may wait on the [cluster] store: at most one read in flight), the Models view's management
// columns (GET /admin/models' view), the Batches view (GET /admin/batches') and the cluster line (GET /admin/runtime's `cluster`). Each is
// read only while a client shows it, and sent only when it changed; the admin table hands the
// sources in (dashboard-routes.ts), with the same reads GET /admin/* answers.

import { detach } from '#src/core/detach.ts';
import { keyedDelta, type SentRows } from './dashboard-state.ts';
import { requestsQuery, type FeedSubscription } from './feed-subscription.ts';

/**
 * The tenants report as the feed reads it: the /admin/tenants view a feature gives (its rows by
 * name, and the rest of the report — queues, scope, replicas — passed on as it is).
 */
export interface TenantsReport {
  readonly tenants: readonly { readonly name: string }[];
  readonly queues?: unknown;
}

/** GET /admin/requests' source: its answer for the query parameters, or the parameter that is wrong. */
export interface RecentRequests {
  read(params: URLSearchParams): { readonly answer: RecentRequestsAnswer } | { readonly error: string; readonly param: string };
}

/** What the dashboard's feed reads of an answer (logs/request-ring.ts answers with more in each record). */
export interface RecentRequestsAnswer {
  /** Newest first. */
  readonly requests: readonly { readonly seq: number }[];
  /** The seq of the newest request finished so far (0: none yet): the next `after`. */
  readonly latest: number;
  readonly kept: number;
  readonly capacity: number;
}

export interface FeedPanelSources {
  /** The last finished requests; absent = none kept. */
  readonly requests: RecentRequests | undefined;
  /** The tenants report; absent = no tenants. */
  readonly tenants: (() => TenantsReport | Promise<TenantsReport>) | undefined;
  /** GET /admin/models' view; absent = no model management. */
  readonly modelsAdmin: (() => unknown) | undefined;
  /** [cluster]'s line of GET /admin/runtime; undefined = no [cluster]. */
  readonly cluster: () => unknown;
  /** GET /admin/batches' view (the batch feature's); absent = no batch feature (no [server] state_dir). */
  readonly batches?: (() => unknown) | undefined;
}

export const NO_PANELS: FeedPanelSources = {
  requests: undefined,
  tenants: undefined,
  modelsAdmin: undefined,
  cluster: () => undefined,
};

const NO_TENANTS: TenantsReport = { tenants: [], queues: {} };
const NO_REQUESTS: RecentRequestsAnswer = { requests: [], latest: 0, kept: 0, capacity: 0 };

/** The Requests view's part of a snapshot or tick: newest first. */
export interface RequestsEvent {
  readonly records: RecentRequestsAnswer['requests'];
  readonly latest: number;
  readonly kept: number;
  readonly capacity: number;
}

/** The `tenants` event: a full report (on connect, `full`), or the tenants whose row changed and the rest when it did. */
export interface TenantsEvent {
  readonly full?: true;
  readonly changed: readonly TenantsReport['tenants'][number][];
  readonly removed: readonly string[];
  readonly order?: readonly string[];
  /** The report without its tenants (queues, scope, replicas), when it changed. */
  readonly rest?: Omit<TenantsReport, 'tenants'>;
  /** The report could not be read (the view says so; the rest of the page stays live). */
  readonly error?: string;
}

interface SentTenants {
  readonly rows: SentRows;
  readonly rest: string;
}

const tenantName = (t: TenantsReport['tenants'][number]): string => t.name;

/** A report against what was sent: the event to send (undefined: nothing changed), and what is sent now. */
export function tenantsDelta(report: TenantsReport, sent: SentTenants): { event: TenantsEvent | undefined; sent: SentTenants } {
  const { tenants, ...rest } = report;
  const rows = keyedDelta(tenants, tenantName, sent.rows);
  const restText = JSON.stringify(rest);
  const next = { rows: rows.sent, rest: restText };
  if (rows.delta === undefined && restText === sent.rest) return { event: undefined, sent: next };
  return {
    event: { ...(rows.delta ?? { changed: [], removed: [] }), ...(restText === sent.rest ? {} : { rest }) },
    sent: next,
  };
}

export const NOTHING_SENT_TENANTS: SentTenants = { rows: new Map(), rest: '' };

/** The full report as one event (a client that just connected). */
export function tenantsFull(report: TenantsReport): TenantsEvent {
  const { tenants, ...rest } = report;
  return { full: true, changed: tenants, removed: [], order: tenants.map(tenantName), rest };
}

/** A panel's read; one that throws is shown as its error in its view, and the feed's tick goes on. */
function readOrError(what: string, read: () => unknown): unknown {
  try {
    return read();
  } catch (error) {
    return { error: `${what} could not be read: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** Reads of the panels, each bounded: requests by FEED_REQUESTS_SHOWN, tenants by one read in flight. */
export class FeedPanels {
  readonly #sources: FeedPanelSources;
  #readingTenants = false;

  constructor(sources: FeedPanelSources) {
    this.#sources = sources;
  }

  /** The client's requests after `after` (newest first), or the filter that is wrong. */
  requests(subscription: FeedSubscription, after: number): RequestsEvent | { readonly error: string; readonly param: string } {
    const read = this.#sources.requests?.read(requestsQuery(subscription, after)) ?? { answer: NO_REQUESTS };
    if ('error' in read) return read;
    const { requests, latest, kept, capacity } = read.answer;
    return { records: requests, latest, kept, capacity };
  }

  /** The management view, null without model management, or `{ error }` when it could not be read. */
  modelsAdmin(): unknown {
    return readOrError('the model management view', () => this.#sources.modelsAdmin?.() ?? null);
  }

  /** The batch jobs' view, null without the batch feature, or `{ error }` when it could not be read. */
  batches(): unknown {
    return readOrError('the batch jobs', () => this.#sources.batches?.() ?? null);
  }

  /** The cluster line, null without [cluster], or `{ error }` when it could not be read. */
  cluster(): unknown {
    return readOrError("the cluster's figures", () => this.#sources.cluster() ?? null);
  }

  /**
   * Reads the tenants report unless a read is under way; `deliver` gets it (or why it failed).
   * Returns whether a read was started.
   */
  readTenants(deliver: (report: TenantsReport | { readonly error: string }) => void): boolean {
    if (this.#readingTenants) return false;
    this.#readingTenants = true;
    const done = (answer: TenantsReport | { readonly error: string }): void => {
      this.#readingTenants = false;
      deliver(answer);
    };
    const failed = (error: unknown): void =>
      done({ error: `the tenants report could not be read: ${error instanceof Error ? error.message : String(error)}` });
    const checked = (report: TenantsReport): void =>
      done(Array.isArray(report?.tenants) ? report : { error: 'the tenants report has no "tenants" list' });
    try {
      detach(Promise.resolve(this.#sources.tenants?.() ?? NO_TENANTS).then(checked), failed);
    } catch (error) {
      failed(error);
    }
    return true;
  }
}
