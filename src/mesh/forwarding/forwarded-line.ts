// What the mesh reports of a forwarded request (its own field, core/forwarded-from.ts): the
// request log's `from_site` and, when the sender stated one, `from_tenant` (bounded: it is the
// sender's free text), just before the line's attempts.

import { featureReports, type FeatureReports } from '#src/core/request-fields.ts';
import { FORWARDED_FROM } from '#src/core/forwarded-from.ts';

/** Longest stated tenant kept in a line. */
const MAX_TEXT = 256;

export const FORWARDED_REPORTS: FeatureReports = featureReports({
  key: FORWARDED_FROM,
  line: {
    place: { before: 'attempts' },
    fields: (peer) => ({
      from_site: peer.site,
      ...(peer.claimedTenant === undefined ? {} : { from_tenant: peer.claimedTenant.slice(0, MAX_TEXT) }),
    }),
  },
});
