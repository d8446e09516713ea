// Issue 25, item 7 (desired vs observed): GET /admin/models listed where each model ran and its
// desired state, but not whether that state holds, what the reconciler would do next, or a switch
// under way. Now each model row says `warm_now`, `satisfied` and `next` (reconciler.plan()); each
// node row says what it runs, its max_instances and the switch under way (for whom, and the victim
// the gateway unloads first); `switchyard models` prints both.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { runModelsCli } from '#test/fixtures/models-cli.ts';
import { startRouterRig, type RouterRig } from '#test/fixtures/router-fleet.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges } from '#test/fixtures/gateway-waits.ts';

interface ModelRow {
  model: string;
  loaded_on: string[];
  desired: { pin: boolean; preload: boolean; warm: number } | null;
  warm_now: number;
  satisfied: boolean | null;
  next: { action: string; node: string; why: string }[];
}
interface NodeRow {
  name: string;
  loaded: string[];
  max_instances: number | null;
  switch: { action: string; model: string; by: string; loaded: boolean; victim: string | null } | null;
}

let rig: RouterRig;

before(async () => {
  rig = await startRouterRig({
    routers: [
      {
        loadTime: '20ms',
        models: [
          ['hot', 'loaded'],
          ['kept', 'loaded'],
        ],
      },
      {
        name: 'slow',
        modelsMax: 1,
        loadTime: '3s',
        models: [
          ['s1', 'loaded'],
          ['s2', 'unloaded'],
        ],
      },
    ],
    // The switch shown is one the gateway runs: 'slow' (two models, --models-max 1, a current build)
    // would otherwise queue its own switches and the gateway would take no ticket (docs/protocols.md §7.z5).
    gateway:
      '[routing]\nload_timeout = "20s"\nrouter_queue = "gateway"\n[[models.available]]\nname = "hot"\nwarm = 2\n[[models.available]]\nname = "kept"\npin = true\n',
  });
});

after(async () => {
  await rig?.close();
});

async function view(): Promise<{ models: ModelRow[]; nodes: NodeRow[] }> {
  return (await httpJson('GET', `${rig.gw.url}/admin/models`)).json();
}

test('each model says whether its desired state holds; each node what it runs', async () => {
  const shown = await view();
  const hot = shown.models.find((m) => m.model === 'hot');
  assert.deepEqual(
    { warm_now: hot?.warm_now, satisfied: hot?.satisfied, next: hot?.next },
    { warm_now: 1, satisfied: false, next: [] },
    'warm = 2 with one node listing it: short',
  );
  const kept = shown.models.find((m) => m.model === 'kept');
  assert.equal(kept?.satisfied, true);
  assert.equal(shown.models.find((m) => m.model === 's1')?.satisfied, null, 'no desired state');
  const router = shown.nodes.find((n) => n.name === 'router');
  assert.deepEqual(
    { loaded: [...(router?.loaded ?? [])].sort(), max: router?.max_instances, switch: router?.switch },
    { loaded: ['hot', 'kept'], max: 2, switch: null },
  );
});

test('a request switch under way shows on its node, with the victim the gateway unloads first', async () => {
  const answer = httpJson('POST', `${rig.gw.url}/v1/chat/completions`, {
    model: 's2',
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 2,
  });
  await untilEvent(
    async () => (await view()).nodes.find((n) => n.name === 'slow')?.switch !== null,
    [nodeChanges(rig.gw), rig.sim.activity('slow')],
    'the switch shown',
  );
  const slow = (await view()).nodes.find((n) => n.name === 'slow');
  assert.deepEqual(slow?.switch, { action: 'load', model: 's2', by: 'request', loaded: false, victim: 's1' });
  const { code, stdout: out } = await runModelsCli(['--url', rig.gw.url], 30_000);
  assert.equal(code, 0);
  assert.match(out, /hot\s+router\s+-\s+warm=2\s+short \(warm 1\/2\)/);
  assert.match(out, /slow\s+\S+\s+1\s+load s2 for request \(unloading s1 first\)/);
  assert.equal((await answer).status, 200);
});
