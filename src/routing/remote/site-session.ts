// Pure: whether a session whose last turn another site served ([mesh]) goes back there. It does
// while that site could take the request as any site choice judges it (choose-site.ts: fresh, it
// lists the model and fits it, reachable, within the tenant's site scope, not tried yet): the site
// holds the session's prefix in its KV cache, the local nodes at most an older one. Otherwise the
// session leaves the site, with why, and the local nodes route it again (policies/sessions.ts).

import { siteExclusion, type SiteRequest } from './choose-site.ts';
import type { RemoteSiteView, SiteExclusion } from './remote-site.ts';

export type SiteSessionVerdict =
  { readonly kind: 'kept'; readonly site: RemoteSiteView } | { readonly kind: 'left'; readonly why: string };

/** Why a session leaves a site, from the site's exclusion: what `session moved from site <id>: …` says. */
export function siteLeftWhy(exclusion: SiteExclusion): string {
  const detail = exclusion.detail === undefined ? '' : ` (${exclusion.detail})`;
  switch (exclusion.code) {
    case 'missing':
      return 'no longer serves the model';
    case 'already_tried':
      return 'failed this request';
    default:
      return `${exclusion.code.replaceAll('_', ' ')}${detail}`;
  }
}

/** The verdict for a session remembered on site `siteId`, among the remote `sites` as the mesh sees them now. */
export function siteSessionVerdict(
  req: SiteRequest,
  siteId: string,
  sites: readonly RemoteSiteView[],
  unreachable: ReadonlyMap<string, string>,
): SiteSessionVerdict {
  const site = sites.find((s) => s.id === siteId);
  if (site === undefined) return { kind: 'left', why: 'no longer a pinned site' };
  const exclusion = siteExclusion(req, site, unreachable);
  return exclusion === undefined ? { kind: 'kept', site } : { kind: 'left', why: siteLeftWhy(exclusion) };
}
