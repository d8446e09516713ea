// Budgets survive a restart of the real `switchyard serve` process (issue 23): a tenant's
// tokens_per_day is used up, the process ends — SIGTERM (it drains and writes once more) or SIGKILL
// after one flush interval (only what the state file held survives) — and the next process on the
// same state_dir still answers that tenant 429, with today's usage as it was. (The SIGTERM case is
// also what an in-process stop and start shows: the stop writes, the next start reads. What the
// state file itself keeps through a crash mid-write, and its lifecycle, is
// 0023-04-budgets-survive-restart.test.ts.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TenantsReport } from '#src/tenants/index.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startSimFleet, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { startGatewayProcess, type GatewayProcess } from '#test/fixtures/processes.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';
import { tempStateDir } from '#test/fixtures/state-dirs.ts';

const chat = { model: 'm', max_tokens: 50, messages: [{ role: 'user', content: 'hello there' }] };
const as = (key: string) => ({ authorization: `Bearer ${key}` });
const WRITTEN = 'tenant usage written to the state file';

let sim: SimFleet;
const running: GatewayProcess[] = [];

before(async () => {
  sim = await startSimFleet('[[node]]\nname = "n"\nkind = "vllm"\nmodels = ["m"]\nttft = "2ms"\ntokens_per_second = 1000\n');
});
after(async () => {
  for (const gw of running) {
    await gw.process.stop('SIGKILL');
    await gw.stop();
  }
  await sim?.close();
});

function configFor(stateDir: string): string {
  // A budget two requests' reservations use up; `spare` has no limits.
  const tenants =
    '[[tenants]]\nname = "capped"\nkeys = ["k-capped"]\ntokens_per_day = 120\n[[tenants]]\nname = "spare"\nkeys = ["k-spare"]\n';
  return gatewayToml([{ name: 'n', url: sim.url('n'), kind: 'vllm' }], tenants, `state_dir = "${stateDir}"`);
}

async function start(config: string): Promise<GatewayProcess> {
  const gw = await startGatewayProcess(config, { SWITCHYARD_LOG_LEVEL: 'debug' });
  running.push(gw);
  return gw;
}

async function stop(gw: GatewayProcess, signal: NodeJS.Signals): Promise<number | null> {
  running.splice(running.indexOf(gw), 1);
  const code = await gw.process.stop(signal);
  await gw.stop(); // the config file
  return code;
}

async function capped(gw: GatewayProcess): Promise<TenantsReport['tenants'][number] | undefined> {
  return (await httpJson('GET', `${gw.url}/admin/tenants`)).json<TenantsReport>().tenants.find((t) => t.name === 'capped');
}

/** Uses up capped's budget: requests until one is refused 429, and every admitted one settled. */
async function useUpBudget(gw: GatewayProcess): Promise<void> {
  await eventually(
    async () => (await httpJson('POST', `${gw.url}/v1/chat/completions`, chat, as('k-spare'))).status === 200,
    60_000,
    'a first answer',
  );
  const statuses: number[] = [];
  for (let i = 0; i < 5 && !statuses.includes(429); i++)
    statuses.push((await httpJson('POST', `${gw.url}/v1/chat/completions`, chat, as('k-capped'))).status);
  assert.ok(statuses.includes(429), `the budget is used up: ${statuses.join(', ')}`);
  await eventually(async () => (await capped(gw))?.inFlight === 0, 30_000, 'every admitted request settled');
}

for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
  test(`a used-up tokens_per_day budget is still used up after the process ends by ${signal} and starts again`, async () => {
    const state = tempStateDir();
    try {
      const config = configFor(state.dir);
      const first = await start(config);
      await useUpBudget(first);
      const before_ = await capped(first);
      if (signal === 'SIGKILL') {
        // One flush interval after everything settled: a request of another tenant changes a row,
        // so the next write comes, and it holds capped's settled usage too.
        const mark = first.process.lines.length;
        assert.equal((await httpJson('POST', `${first.url}/v1/chat/completions`, chat, as('k-spare'))).status, 200);
        await first.process.waitForLine((line) => line.includes(WRITTEN) && first.process.lines.indexOf(line) >= mark, 60_000);
        assert.equal(await stop(first, 'SIGKILL'), null, 'killed, no exit code');
      } else {
        assert.equal(await stop(first, 'SIGTERM'), 0, 'a clean exit');
      }
      const second = await start(config);
      const after_ = await capped(second);
      assert.deepEqual(after_?.today, before_?.today, "today's usage as it was before the restart");
      assert.equal(after_?.remaining.budget, before_?.remaining.budget);
      const res = await httpJson('POST', `${second.url}/v1/chat/completions`, chat, as('k-capped'));
      assert.equal(res.status, 429, `the used-up budget still answers 429: ${res.text}`);
      assert.equal(await stop(second, 'SIGTERM'), 0);
    } finally {
      state.remove();
    }
  });
}
