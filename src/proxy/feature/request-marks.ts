// The features' header marks, asked once per request as it is sent to its targets: each feature
// whose header the request carries (a non-empty value) may follow its attempts (request-feature.ts
// `HeaderMark`). A request that carries none of the headers runs no feature's code.

import type { IncomingMessage } from 'node:http';
import type { HeaderMark, MarkedAttempts, MarkedRequest } from './request-feature.ts';

/** What the marks that claim the request follow; undefined = none claims it. */
export function markedAttempts(
  marks: readonly HeaderMark[],
  req: IncomingMessage,
  request: Omit<MarkedRequest, 'value'>,
): MarkedAttempts | undefined {
  const following: MarkedAttempts[] = [];
  for (const mark of marks) {
    const value = req.headers[mark.header];
    if (typeof value !== 'string' || value === '') continue;
    const attempts = mark.marked({ ...request, value });
    if (attempts !== undefined) following.push(attempts);
  }
  const [only] = following;
  if (following.length <= 1) return only;
  return {
    attempted: (target) => following.forEach((f) => f.attempted(target)),
    concluded: (target, outcome) => following.forEach((f) => f.concluded(target, outcome)),
  };
}
