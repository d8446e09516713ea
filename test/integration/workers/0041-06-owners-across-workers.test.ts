// Issue 41 item 6 with `[server] workers = 2`: the one memory of owners is the owner thread's; an
// answer produced through one worker is found through the other, for its tenant only — each GET of
// a stored response and each control reaches the node that produced it, whichever worker takes the
// connection, and another tenant still gets the gateway's 404.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { startTenantGateway, tenantsToml, vllmNode, type TenantGateway } from '#test/fixtures/tenant-gateway.ts';
import { httpJson } from '#test/fixtures/http.ts';

const FLEET = ['left', 'right'].map((name) => vllmNode(name, ['m'], 'ttft = "1ms"\ntokens_per_second = 4')).join('\n');
const A_KEY = 'sk-workers-a';
const B_KEY = 'sk-workers-b';
const auth = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}`, connection: 'close' });

let fleet: TenantGateway;

before(async () => {
  fleet = await startTenantGateway({
    fleet: FLEET,
    extra: tenantsToml([
      { name: 'team-a', keys: [A_KEY] },
      { name: 'team-b', keys: [B_KEY] },
    ]),
    server: 'workers = 2',
  });
});

after(async () => {
  await fleet?.close();
});

test('a stored response and a running completion are found through either worker, for their tenant only', async () => {
  const made = await httpJson(
    'POST',
    `${fleet.gw.url}/v1/responses`,
    { model: 'm', input: 'hi', max_output_tokens: 2 },
    auth(A_KEY),
  );
  assert.equal(made.status, 200, made.text);
  const id = made.json<{ id: string }>().id;
  const node = made.headers['x-switchyard-node'];
  // New connections each time (`connection: close`): both workers take some of them.
  for (let i = 0; i < 8; i++) {
    const own = await httpJson('GET', `${fleet.gw.url}/v1/responses/${id}`, undefined, auth(A_KEY));
    assert.equal(own.headers['x-switchyard-node'], node, `GET ${i}: to the producer`);
    const other = await httpJson('GET', `${fleet.gw.url}/v1/responses/${id}`, undefined, auth(B_KEY));
    assert.equal(other.status, 404, `GET ${i}: another tenant`);
    assert.equal(other.headers['x-switchyard-node'], undefined);
  }
  const controller = new AbortController();
  const stream = await request(`${fleet.gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth(A_KEY) },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 200, stream: true }),
    signal: controller.signal,
  });
  stream.body.on('error', () => {});
  try {
    const text = await new Promise<string>((resolve) => {
      let seen = '';
      stream.body.on('data', (chunk: Buffer) => {
        seen += chunk.toString('utf8');
        if (seen.includes('\n\n')) resolve(seen);
      });
    });
    const cmpl = (JSON.parse(text.slice(text.indexOf('data:') + 5, text.indexOf('\n\n'))) as { id: string }).id;
    for (let i = 0; i < 4; i++) {
      const own = await httpJson(
        'POST',
        `${fleet.gw.url}/v1/chat/completions/control`,
        { id: cmpl, action: 'reasoning_end', model: 'm' },
        auth(A_KEY),
      );
      assert.equal(own.headers['x-switchyard-node'], stream.headers['x-switchyard-node'], `control ${i}`);
    }
  } finally {
    controller.abort();
  }
});
