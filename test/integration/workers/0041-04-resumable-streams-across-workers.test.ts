// Issue 41 item 4 with `[server] workers = 2`: the conversation → node memory is the owner thread's;
// a stream started with X-Conversation-Id through one worker, whose client dropped mid-stream, is
// reattached through either worker (new connections each time) byte-exact on its node, and another
// tenant gets the gateway's 404 through either.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { routerLearned, simRouter } from '#test/fixtures/router-fleet.ts';
import { tenantsToml } from '#test/fixtures/tenant-gateway.ts';

const A_KEY = 'sk-workers-resume-a';
const B_KEY = 'sk-workers-resume-b';
const auth = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}`, connection: 'close' });

let rig: FleetAndGateway;

before(async () => {
  rig = await startFleetAndGateway(
    simRouter({ name: 'router', more: ['ttft = "2ms"', 'tokens_per_second = 50'], models: [['m', 'loaded']] }),
    (sim) =>
      gatewayToml(
        [{ name: 'router', url: sim.url('router'), kind: 'llamacpp' }],
        tenantsToml([
          { name: 'team-a', keys: [A_KEY] },
          { name: 'team-b', keys: [B_KEY] },
        ]),
        'workers = 2',
      ),
  );
  await routerLearned(rig.gw, { loaded: ['m'] });
});

after(async () => {
  await rig?.close();
});

test('a dropped stream is reattached through either worker, byte-exact; another tenant gets 404 through either', async () => {
  const conv = 'conv-workers';
  const controller = new AbortController();
  const answer = await request(`${rig.gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-conversation-id': conv, ...auth(A_KEY) },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'go' }], max_tokens: 30, stream: true }),
    signal: controller.signal,
  });
  assert.equal(answer.statusCode, 200);
  const got = await new Promise<Buffer>((resolve, reject) => {
    answer.body.once('data', (chunk: Buffer) => resolve(chunk));
    answer.body.on('error', reject);
  });
  answer.body.on('error', () => {});
  controller.abort();
  const replay = async (from: number): Promise<Buffer> => {
    const res = await request(`${rig.gw.url}/v1/stream?conv_id=${conv}&from=${from}`, {
      headers: auth(A_KEY),
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    const bytes = Buffer.from(await res.body.arrayBuffer());
    assert.equal(res.statusCode, 200, bytes.toString());
    return bytes;
  };
  const rest = await replay(got.length);
  const whole = await replay(0);
  assert.equal(Buffer.compare(Buffer.concat([got, rest]), whole), 0);
  // New connections each time: both workers take some of them.
  for (let i = 0; i < 6; i++) {
    assert.equal(Buffer.compare(await replay(0), whole), 0, `replay ${i}`);
    const other = await httpJson('GET', `${rig.gw.url}/v1/stream?conv_id=${conv}&from=0`, undefined, auth(B_KEY));
    assert.equal(other.status, 404, `another tenant ${i}`);
  }
});
