// A reload that gives a tenant its first limit, with `[server] workers = 2` and real worker
// threads: the reload answers once both workers confirmed the new config (no "did not confirm"
// warning, well within its bound), and from then on the limit is exact over both workers: of
// eight requests at once, never more than requests_per_minute are admitted. The ordering itself (the
// ledger takes the limits only after every worker confirmed) is
// test/regressions/0023-03-a-reload-applies-new-limits-after-every-worker.test.ts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { listings } from '#test/fixtures/gateway-waits.ts';

const chat = { model: 'm', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] };
const bearer = { authorization: 'Bearer sk-grows' };
let sim: SimFleet;
let gw: GatewayUnderTest;
const configWith = (limit: string): string =>
  gatewayToml(
    [{ name: 'n', url: sim.url('n'), kind: 'vllm' }],
    `[[tenants]]\nname = "grows"\nkeys = ["sk-grows"]\n${limit}\n`,
    'workers = 2',
  );

before(async () => {
  sim = await startSimFleet('[[node]]\nname = "n"\nkind = "vllm"\nmodels = ["m"]\nttft = "1ms"\ntokens_per_second = 5000\n');
  gw = await startGateway(configWith(''));
  await untilEvent(
    async () => (await httpJson('POST', `${gw.url}/v1/chat/completions`, chat, bearer)).status === 200,
    [listings(gw)],
    'a first answer',
  );
});
after(async () => {
  await gw?.close();
  await sim?.close();
});

test('a limit a reload adds holds exactly over both workers, once both confirmed the config', async () => {
  for (let i = 0; i < 6; i++)
    assert.equal((await httpJson('POST', `${gw.url}/v1/chat/completions`, chat, bearer)).status, 200, 'unlimited before');
  const startedMs = performance.now();
  const outcome = await gw.reload(configWith('requests_per_minute = 3'));
  console.log(`reload answered in ${Math.round(performance.now() - startedMs)} ms`);
  assert.equal(outcome.ok, true);
  assert.ok(!gw.logs().some((l) => String(l.msg).includes('did not confirm the reloaded config')), 'both workers confirmed');
  const statuses = (
    await Promise.all(Array.from({ length: 8 }, () => httpJson('POST', `${gw.url}/v1/chat/completions`, chat, bearer)))
  ).map((r) => r.status);
  // Never past the limit (the bucket also holds the last request before the reload, as in one thread).
  const admitted = statuses.filter((s) => s === 200).length;
  assert.ok(admitted >= 1 && admitted <= 3, `at most the new limit admitted: ${statuses.join(', ')}`);
  assert.equal(statuses.filter((s) => s === 429).length, 8 - admitted);
});
