// Issue 23, item 4, through the real HTTP interface: a tenant's usage of the day, counted by the
// ledger, is in GET /admin/tenants after the gateway is stopped and started again on the same
// [server] state_dir, and a tokens_per_day budget used up before the restart still answers 429
// after it. (Needs the tenant ledger and GET /admin/tenants: skipped while they are not built.)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TenantsReport } from '#src/tenants/index.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { startInProcessGateway, type InProcessGateway } from '#test/fixtures/in-process.ts';
import { startRecordingUpstream } from '#test/fixtures/recording-upstream.ts';
import { tempStateDir } from '#test/fixtures/state-dirs.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { listings } from '#test/fixtures/gateway-waits.ts';

const chat = { model: 'm', max_tokens: 50, messages: [{ role: 'user', content: 'hello there' }] };
const bearer = { authorization: 'Bearer k-capped' };

async function report(gw: InProcessGateway): Promise<TenantsReport | undefined> {
  const res = await httpJson('GET', `${gw.url}/admin/tenants`);
  return res.status === 404 ? undefined : res.json<TenantsReport>();
}

test('usage and a used-up tokens_per_day budget survive a gateway restart', async (t) => {
  const upstream = await startRecordingUpstream(['m']);
  const state = tempStateDir();
  // A budget two requests' reservations use up (each reserves its prompt estimate + max_tokens).
  const toml = gatewayToml(
    [{ name: 'n', url: upstream.url, kind: 'vllm' }],
    '[[tenants]]\nname = "capped"\nkeys = ["k-capped"]\ntokens_per_day = 120\n',
    `state_dir = "${state.dir}"`,
  );
  const started: InProcessGateway[] = [];
  try {
    const first = await startInProcessGateway(toml);
    started.push(first);
    if ((await report(first)) === undefined)
      return t.skip('no GET /admin/tenants on this build (the tenant ledger is not wired)');
    await untilEvent(
      async () => (await httpJson('POST', `${first.url}/v1/chat/completions`, chat, bearer)).status === 200,
      [listings(first)],
      'a first answer',
    );
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await httpJson('POST', `${first.url}/v1/chat/completions`, chat, bearer)).status);
    const before = (await report(first))?.tenants.find((x) => x.name === 'capped');
    assert.ok(before, 'capped in the report');
    assert.ok(statuses.includes(429), `the budget is used up before the restart: ${statuses.join(', ')}`);
    await first.close();
    started.pop();

    const second = await startInProcessGateway(toml);
    started.push(second);
    const after = (await report(second))?.tenants.find((x) => x.name === 'capped');
    assert.deepEqual(after?.today, before.today, 'today’s usage as it was before the restart');
    assert.equal(after?.remaining.budget, before.remaining.budget);
    const res = await httpJson('POST', `${second.url}/v1/chat/completions`, chat, bearer);
    assert.equal(res.status, 429, 'the used-up budget still answers 429 after the restart');
  } finally {
    for (const gw of started) await gw.close();
    await upstream.close();
    state.remove();
  }
});
