// What the dashboard hears of the mesh ([mesh] only): the site events it turns into transitions and
// remembers instants of. Declared here by what the hub reads, so the admin side names no [mesh] file:
// the mesh's event bus (mesh/mesh-events.ts) satisfies it.

export interface SiteEvents {
  'mesh:record-accepted': { readonly site: string };
  'mesh:record-rejected': {
    readonly reason: string;
    readonly site: string | undefined;
    readonly peer: string;
    readonly detail: string;
    /** The log writes a line for this one (and the dashboard a transition). */
    readonly log: boolean;
    /** The message's author is a pinned site or an admitted peer. */
    readonly knownAuthor: boolean;
  };
  'mesh:site-freshness': { readonly site: string; readonly fresh: boolean };
}

/** The mesh's events the hub listens to; `on` answers the unsubscribe. */
export interface SiteEventSource {
  on<K extends keyof SiteEvents>(name: K, listener: (payload: SiteEvents[K]) => void): () => void;
}
