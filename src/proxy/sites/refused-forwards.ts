// A gateway without [mesh] takes no forwards: a request that claims to be another site's forward
// (the forwarded-by header) is refused 401 `unknown_site` whatever client key it carries, never
// served and never forwarded on, and counted as a forward in that was refused. The mesh's request
// half owns what a claim looks like; the public table looks up the header (one lookup per request)
// only where no feature takes forwards (the seam's ForwardRefusal), so nothing here runs for a
// request that claims nothing.

import type { EventBus } from '#src/core/events.ts';
import { FORWARDED_BY } from '#src/mesh/forwarding/forwarded-by.ts';
import { forwardRefused } from '#src/mesh/forwarding/forward-refusal.ts';
import { sendError } from '../http/openai-error.ts';
import type { ForwardRefusal } from '../feature/request-feature.ts';
import type { ProxyEvents } from '../request/proxy-events.ts';

export function refusedForwards(events: EventBus<ProxyEvents>): ForwardRefusal {
  return {
    header: FORWARDED_BY,
    refuse: (req, res) => {
      events.emit('mesh:forwarded-in', { site: '_unknown', result: 'unknown_site' });
      req.resume();
      sendError(res, forwardRefused('unknown_site', 'this gateway has no [mesh] section: it accepts no forwarded requests'));
    },
  };
}
