// Every route of the admin table passes the one admin decision (issue 38, item 9): walked from the
// table itself, so a route added later without the guard — or a change guarded as a read — fails
// here. A rebound Host gets 421 everywhere (/health: the status only); every route that is not a
// GET is a change, refused when another origin sends it even with the admin token.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import type { AddressInfo } from 'node:net';
import { adminEndpoints } from '#src/admin/index.ts';
import type { AdminDeps } from '#src/admin/admin-deps.ts';
import { CONFIG_DEFAULTS } from '#src/config/defaults.ts';
import type { GatewayConfig } from '#src/config/index.ts';
import { ActiveRequests, createHttpServer, listen } from '#src/proxy/index.ts';

const TOKEN = 'every-route-token';

/** Only what building the table and answering /health touch; a refused request reaches nothing else. */
function deps(): AdminDeps {
  const config = { ...CONFIG_DEFAULTS, admin: { ...CONFIG_DEFAULTS.admin, token: TOKEN } } as unknown as GatewayConfig;
  const unreachable = (): never => {
    throw new Error('a refused request reached a handler');
  };
  return {
    clock: { now: () => 0 },
    config: () => config,
    registry: { freshViews: () => [], snapshot: unreachable, view: unreachable },
    // Building the table hands the feed its panels' sources (no fleet data is read then).
    liveFeed: { open: unreachable, attachPanels: () => undefined },
    models: { act: unreachable, view: unreachable },
    requests: { read: unreachable },
    // A feature's read view (the tenants' /admin/tenants) is a route of the table like any other.
    views: { '/admin/tenants': unreachable },
    // A feature's admin command (the batch feature's cancel of any tenant's job) is a change like any other.
    actions: { '/admin/batches/*': unreachable },
    metrics: { text: unreachable, contentType: unreachable },
    commands: { reload: unreachable, wake: unreachable, runtime: unreachable },
  } as unknown as AdminDeps;
}

test('every admin route refuses a rebound Host, and every change another origin', async () => {
  const table = adminEndpoints(deps());
  const server = createHttpServer({
    endpoints: { table },
    activeRequests: new ActiveRequests(),
    onHandlerError: (error) => assert.fail(String(error)),
    requestTimeoutMs: 30_000,
    headersTimeoutMs: 30_000,
    keepAliveTimeoutMs: 1_000,
    maxHeaderBytes: 16_384,
  });
  const address: AddressInfo = await listen(server, '127.0.0.1', 0);
  const base = `http://127.0.0.1:${address.port}`;
  const send = async (
    method: string,
    path: string,
    headers: Record<string, string>,
  ): Promise<{ status: number; text: string }> => {
    const res = await request(`${base}${path}`, {
      method: method as 'GET',
      headers: { authorization: `Bearer ${TOKEN}`, ...headers },
      signal: AbortSignal.timeout(30_000),
    });
    return { status: res.statusCode, text: await res.body.text() };
  };
  try {
    const routes = [...table].flatMap(([path, byMethod]) =>
      [...byMethod.keys()].map((method) => [method, path.replace(/\*$/, 'x')] as const),
    );
    assert.ok(routes.length >= 15, `the table has its routes (${routes.length})`);
    let changes = 0;
    for (const [method, path] of routes) {
      const rebound = await send(method, path, { host: 'rebind.attacker.test' });
      if (path === '/health')
        assert.deepEqual(Object.keys(JSON.parse(rebound.text) as object), ['status'], 'health: the status only');
      else assert.equal(rebound.status, 421, `${method} ${path}: ${rebound.text}`);
      if (method === 'GET') continue;
      changes += 1;
      const crossOrigin = await send(method, path, { origin: 'http://127.0.0.1:1', 'content-type': 'application/json' });
      assert.equal(crossOrigin.status, 403, `${method} ${path}: ${crossOrigin.text}`);
      assert.match(crossOrigin.text, /"code":"cross_origin"/);
    }
    assert.ok(
      routes.some(([method, path]) => method === 'POST' && path === '/admin/batches/x'),
      'the feature command is in the table',
    );
    assert.ok(changes >= 5, `reload, wake, models load and unload, the feature command are changes (${changes})`);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
