// Issue 26, item 4: a router's one switch at a time held only within one gateway: with three
// replicas in front of a --models-max 1 llama-server router, each replica started its own switch
// on the router at once (the router saw a load start while another was loading). With [cluster],
// a replica claims the router's switch in the store before it starts it, a request of another
// replica that would make the router load is refused by the store while the switch lasts (and
// until that replica's listing caught up with it), and a victim in use on any replica is not
// unloaded: requests for three models spread over three replicas never overlap two switches at the
// router, and every one is served.
// An admin load on one replica while another replica's request switch holds the claim is refused
// with the answer naming that switch and its replica.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startSimFleet, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { startReplicas, type Replicas } from '#test/fixtures/cluster-replicas.ts';
import { routerFleet, routerLearned, routerResidency } from '#test/fixtures/router-fleet.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';

const FLEET = routerFleet(
  [
    ['m0', 'loaded'],
    ['m1', 'unloaded'],
    ['m2', 'unloaded'],
    ['m3', 'unloaded'],
  ],
  {
    modelsMax: 1,
    loadTime: '300ms',
    more: ['ttft = "5ms"', 'tokens_per_second = 1000'],
  },
);

interface Residency {
  peakLoading: number;
  overlaps: number;
  loads: number;
  queued: string[];
  unloadsMidRequest: number;
}

let sim: SimFleet | undefined;
let replicas: Replicas | undefined;

before(async () => {
  sim = await startSimFleet(FLEET);
  replicas = await startReplicas({
    count: 3,
    nodes: [{ name: 'router', url: sim.url('router'), kind: 'llamacpp' }],
    extra: '[routing]\nqueue_timeout = "60s"\nload_timeout = "20s"\nmax_queue = 1000',
  });
  for (const gw of replicas.gateways) await routerLearned(gw, { modelsMax: 1, loaded: ['m0'] });
});
after(async () => {
  await replicas?.close();
  await sim?.close();
});

const residency = (): Promise<Residency> => routerResidency<Residency>(sim?.url('router') ?? '');
const chat = (model: string): Record<string, unknown> => ({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });

test('requests for three models over three replicas: one switch at a time at the router, every one answered', async () => {
  const gws = replicas?.gateways ?? [];
  const models = ['m1', 'm2', 'm3'];
  const asks = Array.from({ length: 18 }, (_, i) =>
    httpJson('POST', `${gws[i % 3]?.url}/v1/chat/completions`, chat(models[(i + Math.floor(i / 3)) % 3] ?? 'm1')),
  );
  const answers = await Promise.all(asks);
  const seen = await residency();
  // Every one served: no replica unloads a model another is using, none sends a request that loads while another switch loads.
  for (const answer of answers)
    assert.equal(answer.status, 200, `${answer.status} ${answer.text} (router ${JSON.stringify(seen)})`);
  assert.ok(seen.loads >= 3, `the router switched (loads ${seen.loads})`);
  assert.equal(seen.unloadsMidRequest, 0, 'no model unloaded while a request of any replica was on it');
  assert.equal(
    seen.overlaps,
    0,
    `no switch started while another was loading (peak loads at once ${seen.peakLoading}, overlaps ${seen.overlaps})`,
  );
  assert.equal(seen.peakLoading, 1);
  assert.deepEqual(seen.queued, [], 'the router queued nothing itself');
});

test("an admin load on one replica while another replica's request switch holds the claim: refused, naming it", async () => {
  const [r0, r1] = replicas?.gateways ?? [];
  assert.ok(r0 && r1);
  const target = (await residency()).loads;
  const request = httpJson('POST', `${r0.url}/v1/chat/completions`, chat('m0'));
  await untilEvent(
    async () => (await residency()).loads > target,
    [sim?.activity('router') ?? assert.fail('no sim')],
    "r0's switch under way",
  );
  // r1 learns of r0's claim by its announcement (or one short poll).
  let last = '';
  await eventually(
    async () => {
      const admin = await httpJson('POST', `${r1.url}/admin/models/load`, { model: 'm2', node: 'router' });
      last = `${admin.status} ${admin.text}`;
      return (
        admin.status !== 200 && /a switch is under way on this node: loading m0 for a request on replica r0/.test(admin.text)
      );
    },
    5_000,
    "the admin load refused naming r0's switch",
  ).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}; last answer: ${last}`);
  });
  assert.equal((await request).status, 200);
});
