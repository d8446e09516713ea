// The sessions port: what a later target source (the remote sites, [mesh]) reads and writes of the
// one session table routing keeps (routing/policies/session-table.ts). In-thread only: the main
// thread's is the policies' table itself; a request worker is given none (its sessions are kept on
// local nodes by the main thread's policies, and across sites not at all).

import type { RouteRequest } from '#src/routing/index.ts';

export interface SessionPort {
  /** Where the request's session's last turn went (a node's name, or `site <id>`); undefined = none remembered. */
  remembered(req: RouteRequest): string | undefined;
  /** The request's session's turn was served by `target` (`site <id>`: siteSessionTarget). */
  keep(req: RouteRequest, target: string): void;
}
