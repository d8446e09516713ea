// Issue 41 items 5–6: a request that names an answer rather than a model — `GET`/`DELETE
// /v1/responses/{id}`, `POST /v1/chat/completions/control {id}` — goes to the node that produced
// that answer, only for the tenant that asked for it; any other tenant, and an id never seen, get
// the gateway's 404 in OpenAI's shape and reach no node. Through the official openai client.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { NotFoundError } from 'openai';
import { startTenantGateway, tenantsToml, vllmNode, type TenantGateway } from '#test/fixtures/tenant-gateway.ts';
import { request } from 'undici';
import { httpJson } from '#test/fixtures/http.ts';

// Two nodes serving one model: which one produced an answer is the routing's choice, learned per answer.
const FLEET = [
  ...['left', 'right'].map((name) => vllmNode(name, ['m'])),
  // `slow` streams for seconds: its answer is still generating when the control is sent.
  ...['slow-1', 'slow-2'].map((name) => vllmNode(name, ['slow'], 'ttft = "1ms"\ntokens_per_second = 4')),
].join('\n');
const A_KEY = 'sk-tenant-a-41aa';
const B_KEY = 'sk-tenant-b-41bb';

let fleet: TenantGateway;

before(async () => {
  fleet = await startTenantGateway({
    fleet: FLEET,
    extra: tenantsToml([
      { name: 'team-a', keys: [A_KEY] },
      { name: 'team-b', keys: [B_KEY] },
    ]),
  });
});

after(async () => {
  await fleet?.close();
});

const client = (apiKey: string): OpenAI => new OpenAI({ baseURL: `${fleet.gw.url}/v1`, apiKey, maxRetries: 0, timeout: 15_000 });
const auth = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

/** The node a request reached, as the gateway says. */
async function producedBy(apiKey: string): Promise<{ id: string; node: string }> {
  const answer = await httpJson(
    'POST',
    `${fleet.gw.url}/v1/responses`,
    { model: 'm', input: 'hi', max_output_tokens: 4 },
    auth(apiKey),
  );
  assert.equal(answer.status, 200, answer.text);
  const node = answer.headers['x-switchyard-node'];
  assert.equal(typeof node, 'string');
  return { id: answer.json<{ id: string }>().id, node: node as string };
}

test('GET and DELETE /v1/responses/{id} reach the node that produced it, for its tenant only', async () => {
  const { id, node } = await producedBy(A_KEY);
  assert.match(id, /^resp_/);
  for (const method of ['GET', 'DELETE']) {
    const own = await httpJson(method, `${fleet.gw.url}/v1/responses/${id}`, undefined, auth(A_KEY));
    assert.equal(own.headers['x-switchyard-node'], node, `${method}: sent to the producer`);
    const other = await httpJson(method, `${fleet.gw.url}/v1/responses/${id}`, undefined, auth(B_KEY));
    assert.equal(other.status, 404);
    assert.equal(other.headers['x-switchyard-node'], undefined, `${method}: another tenant's id reaches no node`);
    const unknown = await httpJson(method, `${fleet.gw.url}/v1/responses/resp_never_seen`, undefined, auth(B_KEY));
    assert.equal(unknown.status, 404);
    // Another tenant's id reads exactly as an unknown one (but for the id it names).
    assert.deepEqual(other.text.replace(id, 'X'), unknown.text.replace('resp_never_seen', 'X'));
    assert.equal(other.json<{ error: { code: string } }>().error.code, 'not_found');
  }
  const items = await httpJson('GET', `${fleet.gw.url}/v1/responses/${id}/input_items`, undefined, auth(A_KEY));
  assert.equal(items.headers['x-switchyard-node'], node);
});

test('the official client: retrieve and delete of an unknown or foreign id are NotFoundError', async () => {
  const { id } = await producedBy(A_KEY);
  await assert.rejects(client(B_KEY).responses.retrieve(id), NotFoundError);
  await assert.rejects(client(B_KEY).responses.delete(id), NotFoundError);
  await assert.rejects(client(A_KEY).responses.retrieve('resp_unknown'), NotFoundError);
});

test("a control sent while the stream runs reaches its node: the id is learned from the stream's first chunk", async () => {
  const stream = await request(`${fleet.gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth(A_KEY) },
    body: JSON.stringify({ model: 'slow', messages: [{ role: 'user', content: 'hi' }], max_tokens: 200, stream: true }),
    signal: AbortSignal.timeout(60_000),
  });
  try {
    assert.equal(stream.statusCode, 200);
    const node = stream.headers['x-switchyard-node'];
    let text = '';
    for await (const chunk of stream.body) {
      text += String(chunk);
      if (text.includes('\n\n')) break;
    }
    const first = JSON.parse(text.slice(text.indexOf('data:') + 5, text.indexOf('\n\n'))) as { id: string };
    assert.match(first.id, /^chatcmpl-/);
    const body = { id: first.id, action: 'reasoning_end', model: 'slow' };
    const own = await httpJson('POST', `${fleet.gw.url}/v1/chat/completions/control`, body, auth(A_KEY));
    assert.equal(own.headers['x-switchyard-node'], node, `the control reached the running node (${own.status} ${own.text})`);
    const other = await httpJson('POST', `${fleet.gw.url}/v1/chat/completions/control`, body, auth(B_KEY));
    assert.equal(other.status, 404);
    assert.equal(other.headers['x-switchyard-node'], undefined);
    const missing = await httpJson(
      'POST',
      `${fleet.gw.url}/v1/chat/completions/control`,
      { action: 'reasoning_end' },
      auth(A_KEY),
    );
    assert.equal(missing.status, 400);
  } finally {
    stream.body.destroy();
  }
});
