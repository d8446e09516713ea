// Pure: whether the admin routes are readable by anyone who reaches the main listener — no admin
// token, no separate admin listener, and a main listener that is not loopback-only. Documented
// behaviour (reads are open without a token), but worth a warning at start: with `api_keys` set an
// operator may believe the whole listener is guarded.

import { isLoopbackAddress } from '#src/proxy/index.ts';

export interface AdminExposure {
  readonly tokenSet: boolean;
  readonly ownListener: boolean;
  /** The main listener's host. */
  readonly mainHost: string;
}

export function adminOpenToNetwork(facts: AdminExposure): boolean {
  const loopbackOnly = facts.mainHost === 'localhost' || isLoopbackAddress(facts.mainHost);
  return !facts.tokenSet && !facts.ownListener && !loopbackOnly;
}
