// What a selection policy reads of a request besides its model and size: each policy declares its
// features (`SelectionPolicy.reads`, and the same list in the registry, POLICIES), so the request
// path computes only what its policy reads and never names a policy. Reading a feature parses the
// request body; a request whose policy reads none of them pays nothing.

import type { RouteRequest } from '../route-request.ts';

/** Every feature a policy may read; each is a string field of RouteRequest. */
export const REQUEST_FEATURES = ['affinityKey', 'promptPrefix', 'sessionKey', 'previousResponseId'] as const;
export type RequestFeature = (typeof REQUEST_FEATURES)[number];

/** The features computed for one request: only those its policy reads are present. */
export type RequestFeatures = Pick<RouteRequest, RequestFeature>;

/**
 * How the request path reads each feature from the request (headers and body, src/proxy/); called
 * at most once each, and only for a feature the policy reads. Undefined = the request has none.
 */
export type FeatureReaders = { readonly [F in RequestFeature]: () => string | undefined };

/** Pure apart from the readers it calls: the features `reads` names, read once each. */
export function readFeatures(reads: readonly RequestFeature[], readers: FeatureReaders): RequestFeatures {
  const features: { -readonly [F in RequestFeature]?: string } = {};
  for (const feature of reads) {
    const value = readers[feature]();
    if (value !== undefined) features[feature] = value;
  }
  return features;
}
