// Sessions are kept across sites (issue 40, item 3): a Claude Code session at site a whose local
// node is down is served by site c; it then stays on c for its next turns — also once a's node is
// back — while c is fresh and serves the model, saying so in x-switchyard-route and explain; when c
// turns stale (the in-memory bus partitioned) or fails a turn, it moves back to a's node, with why, and stays there.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitForHost } from '#test/fixtures/context.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { TwoSiteMesh } from '#test/fixtures/two-site-mesh.ts';

const HEARTBEAT_MS = 200;
const FRESHNESS_MS = 600;
const mesh = new TwoSiteMesh({ heartbeatMs: HEARTBEAT_MS, freshnessMs: FRESHNESS_MS, sharedModels: ['m'] });
const SESSION = '3f1d2c4b-9a8e-4f7d-b6c5-1e2d3c4b5a69';
const SOURCE = 'x-claude-code-session-id';

before(async () => {
  await mesh.start();
  await mesh.waitListed('a', 'm-c', 'c');
  await waitForHost(mesh.site('a').gw, 'a-gpu', (h) => h.loaded.includes('m'), 'listed');
});
after(() => mesh.close());

interface Turn {
  readonly site: string | undefined;
  readonly node: string | undefined;
  readonly route: string;
}

/** One turn of the session at site a (`session`: with its Claude Code header; without: a plain request). */
async function turn(n: number, session = true): Promise<Turn> {
  const res = await httpJson(
    'POST',
    `${mesh.site('a').gw.url}/v1/chat/completions`,
    { model: 'm', max_tokens: 4, messages: [{ role: 'user', content: `turn ${n}` }] },
    session ? { [SOURCE]: SESSION } : {},
  );
  assert.equal(res.status, 200, res.text);
  const header = (name: string): string | undefined => {
    const value = res.headers[name];
    return value === undefined ? undefined : String(value);
  };
  return { site: header('x-switchyard-site'), node: header('x-switchyard-node'), route: String(header('x-switchyard-route')) };
}

interface ExplainedSession {
  readonly outcome: string;
  readonly site_choice?: string | null;
  readonly choice: { readonly reason: string } | null;
  readonly session?: { readonly node: string | null; readonly verdict: string };
}

async function explain(): Promise<ExplainedSession> {
  const res = await httpJson('GET', `${mesh.site('a').gw.url}/admin/explain?model=m&session=${SESSION}`);
  assert.equal(res.status, 200, res.text);
  return res.json<ExplainedSession>();
}

test('a session served by another site stays there while it is fresh, and comes back to the local node when it turns stale', async () => {
  const a = mesh.site('a');
  const first = await turn(0);
  assert.equal(first.node, 'a-gpu', JSON.stringify(first));
  assert.equal(first.site, undefined);

  // a's only node goes down: the session's turn is served by c.
  a.sim.node('a-gpu').setFaults({ health: 'fail' });
  await waitForHost(a.gw, 'a-gpu', (h) => h.health.status === 'dead', 'dead');
  const moved = await turn(1);
  assert.equal(moved.site, 'c', JSON.stringify(moved));
  assert.equal(moved.route, `site; session moved to site c: no local node could serve it (${SOURCE})`);

  // a's node is back: the session stays on c (its prefix is cached there), plain requests are local again.
  a.sim.node('a-gpu').setFaults({ health: 'none' });
  await waitForHost(a.gw, 'a-gpu', (h) => h.health.status === 'healthy', 'healthy');
  assert.equal((await turn(2, false)).node, 'a-gpu', 'a plain request is served by the local node again');
  const explained = await explain();
  assert.equal(explained.outcome, 'forward', JSON.stringify(explained));
  assert.equal(explained.site_choice, 'c');
  assert.deepEqual({ node: explained.session?.node, verdict: explained.session?.verdict }, { node: 'site c', verdict: 'kept' });
  for (let n = 3; n < 8; n++) {
    const kept = await turn(n);
    assert.equal(kept.site, 'c', `turn ${n}: ${JSON.stringify(kept)}`);
    assert.equal(kept.route, `site; session kept on site c (${SOURCE})`);
  }

  // c turns stale at a: the session moves back to a's node, says why, and stays there.
  mesh.bus.partition(['peer-a'], ['peer-c']);
  const freshness = async (): Promise<boolean | undefined> =>
    (await httpJson('GET', `${a.gw.url}/admin/sites`))
      .json<{ sites: { id: string; fresh: boolean }[] }>()
      .sites.find((s) => s.id === 'c')?.fresh;
  await untilEvent(async () => (await freshness()) === false, mesh.changes(), 'c stale at a');
  const stale = `session moved from site c: stale (no fresh record within the freshness window; its last record listed this model) (${SOURCE})`;
  const left = await explain();
  assert.equal(left.choice?.reason, stale.replace(SOURCE, 'session query'), JSON.stringify(left));
  assert.equal(left.session?.verdict, 'moved');
  const back = await turn(8);
  assert.equal(back.node, 'a-gpu', JSON.stringify(back));
  assert.equal(back.site, undefined);
  assert.equal(back.route, `least-in-flight; ${stale}`);

  mesh.bus.heal();
  await untilEvent(async () => (await freshness()) === true, mesh.changes(), 'c fresh again at a');
  const stays = await turn(9);
  assert.equal(stays.node, 'a-gpu', JSON.stringify(stays));
  assert.match(stays.route, /^least-in-flight; session kept on its node \(x-claude-code-session-id, /);
});

test('a session whose site fails its turn comes back to the local node, saying so', async () => {
  const a = mesh.site('a');
  const c = mesh.site('c');
  a.sim.node('a-gpu').setFaults({ health: 'fail' });
  await waitForHost(a.gw, 'a-gpu', (h) => h.health.status === 'dead', 'dead');
  assert.equal((await turn(10)).site, 'c');
  a.sim.node('a-gpu').setFaults({ health: 'none' });
  await waitForHost(a.gw, 'a-gpu', (h) => h.health.status === 'healthy', 'healthy');
  c.sim.node('c-gpu').setFaults({ inference: 'error500' });
  try {
    const back = await turn(11);
    assert.equal(back.node, 'a-gpu', JSON.stringify(back));
    assert.equal(back.route, `least-in-flight; session moved from site c: failed this request (${SOURCE})`);
  } finally {
    c.sim.node('c-gpu').setFaults({ inference: 'none' });
  }
  const stays = await turn(12);
  assert.equal(stays.node, 'a-gpu', JSON.stringify(stays));
});
