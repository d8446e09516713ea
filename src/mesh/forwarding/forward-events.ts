// The request plane's forwarding events as the mesh's control-plane half reads them (the proxy's
// `mesh:forwarded`, `mesh:forwarded-in`, `mesh:site-reachability`): subscribed for it by the feature
// list (mesh/ does not import proxy/), each returning its unsubscribe.

/** A request forwarded to another site, and how that attempt ended (success, connect_error, http_5xx, …). */
export interface ForwardedOut {
  readonly site: string;
  readonly result: string;
}

/** A forwarded request arriving from another site: `accepted` (with how it is admitted), or the refusal code. */
export interface ForwardedIn {
  readonly site: string;
  readonly result: string;
  readonly admitted?:
    { readonly tenant: string; readonly priority: string; readonly claimedClass: string | undefined } | undefined;
}

/** A remote site stopped answering forwards (backing off), or answered again. */
export interface SiteReachability {
  readonly site: string;
  readonly reachable: boolean;
  readonly detail: string | undefined;
}

export interface ForwardEvents {
  readonly forwarded: (listener: (event: ForwardedOut) => void) => () => void;
  readonly forwardedIn: (listener: (event: ForwardedIn) => void) => () => void;
  readonly reachability: (listener: (event: SiteReachability) => void) => () => void;
}
