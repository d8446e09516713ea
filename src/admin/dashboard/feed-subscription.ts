// Pure: what one page's live feed carries. The page names the parts of the fleet its open views
// show (`GET /admin/events?topics=nodes,models,…`) and, for the Requests view, its filters
// (`model`, `node`, `tenant`, `status`, as GET /admin/requests reads them); the feed sends each
// client a snapshot of those parts and then their changes only. A view the operator closes is one
// topic fewer: the page opens a new feed then (an action the operator takes, never a timer). No
// `topics` parameter: every topic (a plain `curl` of the feed sees everything).

export const FEED_TOPICS = [
  /** The Fleet view's node rows. */
  'nodes',
  /** The Models view's rows (where each model runs, loads on demand, its queue). */
  'models',
  /** The Models view's management columns (GET /admin/models: desired state, holds, failed loads). */
  'models_admin',
  /** The Sites view. */
  'sites',
  /** The Events view's health, discovery, wake, mesh and reload transitions. */
  'transitions',
  /** The Traffic view's per-bucket series. */
  'traffic',
  /** The Requests view: each finished request that passes the client's filters. */
  'requests',
  /** The Tenants view: each tenant's limits and counters, and the queues by class and tenant. */
  'tenants',
  /** The cluster line ([cluster]: this replica, the store, its leases). */
  'cluster',
  /** The Batches view (GET /admin/batches: every tenant's latest jobs, their progress, rate and time left). */
  'batches',
] as const;

export type FeedTopic = (typeof FEED_TOPICS)[number];

/** Finished requests a page keeps and a feed sends it at most per snapshot or tick (the newest). */
export const FEED_REQUESTS_SHOWN = 200;

/** The Requests view's filter parameters, passed on to the request ring's query as they are. */
export const REQUEST_FILTERS = ['model', 'node', 'tenant', 'status'] as const;

export interface FeedSubscription {
  readonly topics: ReadonlySet<FeedTopic>;
  /** The Requests view's filters (only REQUEST_FILTERS, non-empty), sorted: also the key clients share a read by. */
  readonly requestFilters: string;
}

export const EVERY_TOPIC: FeedSubscription = { topics: new Set(FEED_TOPICS), requestFilters: '' };

const isTopic = (name: string): name is FeedTopic => (FEED_TOPICS as readonly string[]).includes(name);

/** The subscription a feed request asks for, or the parameter that is wrong and why. */
export function readSubscription(
  params: URLSearchParams,
): { readonly subscription: FeedSubscription } | { readonly error: string; readonly param: string } {
  const listed = params.get('topics');
  const topics = new Set<FeedTopic>();
  if (listed === null) for (const topic of FEED_TOPICS) topics.add(topic);
  else {
    for (const name of listed.split(',')) {
      if (name === '') continue;
      if (!isTopic(name))
        return { error: `unknown feed topic '${name.slice(0, 64)}'; topics: ${FEED_TOPICS.join(', ')}`, param: 'topics' };
      topics.add(name);
    }
  }
  const filters = new URLSearchParams();
  for (const name of REQUEST_FILTERS) {
    const value = params.get(name);
    if (value !== null && value !== '') filters.set(name, value);
  }
  return { subscription: { topics, requestFilters: filters.toString() } };
}

/** The ring query for a subscription's requests newer than `after`. */
export function requestsQuery(subscription: FeedSubscription, after: number): URLSearchParams {
  const query = new URLSearchParams(subscription.requestFilters);
  query.set('limit', String(FEED_REQUESTS_SHOWN));
  if (after > 0) query.set('after', String(after));
  return query;
}
