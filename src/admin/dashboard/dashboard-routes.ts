// The dashboard's routes: the page (/admin/, /admin redirects there), its files under /admin/ui/,
// and the live feed /admin/events (the page's one source of fleet data: ?topics= names what its
// open views show, feed-subscription.ts). The page and its files hold no fleet data and are served to
// anyone who reaches the admin listener under an expected Host, so a browser can show the token
// prompt; every byte of fleet data (the feed, /admin/explain) passes the same admin guard as every
// admin route.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Guard, RecentRequests } from '../admin-deps.ts';
import type { AdminAccess } from '../admin-access.ts';
import { badRequest } from '#src/core/errors.ts';
import { sendError, sendJson, type TableBuilder } from '#src/proxy/index.ts';
import { ASSET_PREFIX, dashboardAssetPaths, loadDashboardAssets, type Asset, type DashboardAssets } from './assets.ts';
import { feedAddressKey } from './feed-admission.ts';
import type { FeedPanelSources } from './feed-panels.ts';
import { readSubscription } from './feed-subscription.ts';
import type { LiveFeed } from './live-feed.ts';

export interface DashboardSources extends FeedPanelSources {
  readonly feed: Pick<LiveFeed, 'open' | 'attachPanels'>;
  /** The last finished requests; absent = none kept. */
  readonly requests: RecentRequests | undefined;
  /** Whether a request may change state (the admin guard's judgement for a mutation). */
  readonly mayAct: (req: IncomingMessage) => AdminAccess;
}

export function dashboardRoutes(table: TableBuilder, sources: DashboardSources, guard: Guard): void {
  const { feed } = sources;
  // The feed reads what these routes answer (requests, tenants, model management, the cluster line), through the same sources.
  feed.attachPanels({
    requests: sources.requests,
    tenants: sources.tenants,
    modelsAdmin: sources.modelsAdmin,
    cluster: sources.cluster,
    batches: sources.batches,
  });
  // The page's files are read on the first request for one (a gateway nobody opens the dashboard of never holds them).
  const paths = dashboardAssetPaths();
  const read: { assets: DashboardAssets | undefined } = { assets: undefined };
  const assetsNow = (): DashboardAssets => (read.assets ??= loadDashboardAssets(paths));
  const send = (res: ServerResponse, a: Asset): void => {
    const assets = assetsNow();
    res.writeHead(200, {
      'content-type': a.contentType,
      'content-length': a.body.length,
      'cache-control': 'no-cache',
      'content-security-policy': assets.csp,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    });
    res.end(a.body);
  };
  // The page and its files pass the Host check only (a page of a rebound name is not served either).
  table.add(
    'GET',
    '/admin',
    guard('page', (req, res) => {
      req.resume();
      // Relative, so a path prefix added by a reverse proxy survives the redirect.
      res.writeHead(308, { location: 'admin/', 'content-length': 0 });
      res.end();
    }),
  );
  table.add(
    'GET',
    '/admin/',
    guard('page', (req, res) => {
      req.resume();
      send(res, assetsNow().page);
    }),
  );
  for (const name of paths.keys()) {
    table.add(
      'GET',
      ASSET_PREFIX + name,
      guard('page', (req, res) => {
        req.resume();
        const a = assetsNow().files.get(name);
        if (a !== undefined) send(res, a);
        else res.writeHead(404, { 'content-length': 0 }).end();
      }),
    );
  }
  table.add(
    'GET',
    '/admin/events',
    guard('read', (req, res, url) => {
      req.resume();
      const asked = readSubscription(url.searchParams);
      if ('error' in asked) {
        sendError(res, badRequest(asked.error, asked.param));
        return;
      }
      if (req.method === 'HEAD') {
        // A HEAD must not become a stream that never ends.
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' });
        res.end();
        return;
      }
      // Slots are shared by client address (feed-admission.ts); a Requests filter the ring refuses is named.
      const refused = feed.open(res, feedAddressKey(req.socket.remoteAddress ?? ''), asked.subscription);
      if (refused !== undefined) sendError(res, badRequest(refused.error, refused.param));
    }),
  );
  // The last finished requests, newest first, filtered (logs/request-query.ts), for scripts; the page has them from the feed.
  table.add(
    'GET',
    '/admin/requests',
    guard('read', (req, res, url) => {
      req.resume();
      const read = sources.requests?.read(url.searchParams) ?? { answer: { requests: [], latest: 0, kept: 0, capacity: 0 } };
      if ('error' in read) {
        sendError(res, badRequest(read.error, read.param));
        return;
      }
      sendJson(res, 200, read.answer);
    }),
  );
  // What this caller may do: the page shows its action buttons, or says why they are off.
  table.add(
    'GET',
    '/admin/access',
    guard('read', (req, res) => {
      req.resume();
      const act = sources.mayAct(req);
      sendJson(res, 200, act.allowed ? { read: true, act: true } : { read: true, act: false, why: act.message });
    }),
  );
}
