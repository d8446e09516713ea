// What routing needs to know about one request.

export interface RouteRequest {
  /** The served model id (aliases already resolved). */
  readonly model: string;
  /** The model's group from [[models.available]]; undefined = nodes without a group. */
  readonly group: string | undefined;
  /** Nodes already attempted for this request (failover never returns to them). */
  readonly triedNodes: ReadonlySet<string>;
}
