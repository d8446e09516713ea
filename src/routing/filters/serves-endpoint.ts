// A node takes a request only on an endpoint it serves (node-endpoints.ts: its kind's set or
// `[[nodes]] endpoints`, less what its version predates and what it answered with a route-level
// 404). A request with no endpoint passes.
import { endpointLack } from '../node-endpoints.ts';
import { predicateFilter } from '../filter.ts';

export const servesEndpoint = predicateFilter(
  'serves-endpoint',
  (req, node) => {
    const endpoint = req.endpoint;
    if (endpoint === undefined) return undefined;
    const detail = endpointLack(node, endpoint);
    return detail === undefined ? undefined : { code: 'endpoint_unsupported', detail };
  },
  'model',
);
