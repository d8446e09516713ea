// The features' header marks, asked once per request as it is sent to its targets: each feature
// whose header the request carries (a non-empty value) may follow its attempts (request-feature.ts
// `HeaderMark`). A request that carries none of the headers runs no feature's code.

import type { IncomingMessage } from 'node:http';
import type { HeaderMark, MarkedAttempts, MarkedRequest } from './request-feature.ts';

/** Where a marked request's facts are read from (the request itself): asked only once a mark claims it. */
export interface MarkFacts {
  markedFacts(): Omit<MarkedRequest, 'value'>;
}

/**
 * What the marks that claim the request follow; undefined = none claims it. The request's facts are
 * gathered only for a request that carries a mark's header: a plain request allocates nothing here.
 */
export function markedAttempts(marks: readonly HeaderMark[], req: IncomingMessage, facts: MarkFacts): MarkedAttempts | undefined {
  let following: MarkedAttempts[] | undefined;
  for (const mark of marks) {
    const value = req.headers[mark.header];
    if (typeof value !== 'string' || value === '') continue;
    const attempts = mark.marked({ ...facts.markedFacts(), value });
    if (attempts !== undefined) (following ??= []).push(attempts);
  }
  if (following === undefined) return undefined;
  const [only] = following;
  if (following.length <= 1) return only;
  return {
    attempted: (target) => following.forEach((f) => f.attempted(target)),
    concluded: (target, outcome) => following.forEach((f) => f.concluded(target, outcome)),
  };
}
