// A node takes a request only on an endpoint it serves: its kind's set (or `[[nodes]] endpoints`),
// less the endpoints it answered with a route-level 404. A request with no endpoint passes.
import { servedEndpoints } from '#src/kinds/index.ts';
import { predicateFilter } from '../filter.ts';

export const servesEndpoint = predicateFilter('serves-endpoint', (req, node) => {
  const endpoint = req.endpoint;
  if (endpoint === undefined) return undefined;
  const lacking = node.lackingEndpoints?.[endpoint];
  if (lacking !== undefined) return { code: 'endpoint_unsupported', detail: `answered POST ${endpoint} with a route-level 404 (${lacking})` };
  if (servedEndpoints(node.spec).includes(endpoint)) return undefined;
  const from = node.spec.endpoints === undefined ? `its kind (${node.spec.kind})` : 'its [[nodes]] endpoints';
  return { code: 'endpoint_unsupported', detail: `${from} does not serve POST ${endpoint}` };
}, 'model');
