// Pure: which request outcomes say something about a node's own health (passive ejection).
// A refusal the node explained (overflow, unknown model) proves it alive, unless the gateway's own
// figures disprove it (contradictory_refusal: counted like a failure); a client leaving proves nothing.

import type { ProxyEvents } from '../request/proxy-events.ts';
import type { UpstreamVerdict } from '#src/nodes/index.ts';

export /** Which attempt results say something about the node's own health. */
function upstreamVerdict(result: ProxyEvents['proxy:attempt']['result']): UpstreamVerdict {
  switch (result) {
    case 'success':
    case 'context_overflow':
    case 'model_not_found':
    case 'endpoint_missing':
      return 'success';
    case 'http_5xx':
    case 'connect_error':
    case 'reset':
    case 'timeout':
    case 'stream_error':
    case 'invalid_body':
    case 'contradictory_refusal':
      return 'failure';
    case 'client_abort':
    case 'interim_response':
    // Only remote sites answer so (their own refusals, never passed on): nothing about a node.
    case 'http_error':
    // The model failed to load, not the node: the scheduler holds that model off the node instead.
    case 'load_timeout':
      return 'neutral';
  }
}
