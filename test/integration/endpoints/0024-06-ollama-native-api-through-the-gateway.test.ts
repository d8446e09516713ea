// Issue 24, Ollama's native API: Open WebUI and the `ollama` clients in Ollama mode speak `/api/*`,
// which the gateway did not route (every such path was the gateway's OpenAI-shaped 404). The
// official, unchanged `ollama` npm client now goes through it with a client key: `chat` streamed
// (NDJSON), `generate`, `embed`, `show` routed by model to an Ollama node (`llama3` finds
// `llama3:latest`, as Ollama's own names go), `list` and `ps` answered by the gateway from what it
// knows in Ollama's shapes and within the tenant's model scope, `version`; an unknown model is
// Ollama's 404 `model 'x' not found`; a prompt no node can hold is refused by the guard in
// Ollama's shape; a pull is refused 403 in Ollama's error shape; a llama-server
// that lists the same model is excluded with `endpoint_unsupported` and never asked; the requests
// are counted by endpoint.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ollama } from 'ollama';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { eventually, simRequests } from '#test/fixtures/http.ts';
import { nodeChanges, untilListed } from '#test/fixtures/gateway-waits.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { hostsOf } from '#test/fixtures/admin-readers.ts';

const FLEET = `
[[node]]
name = "olla"
kind = "ollama"
ttft = "5ms"
tokens_per_second = 400
[[node.model]]
id = "llama3:latest"
context = 4096
[[node.model]]
id = "nomic-embed-text:latest"
context = 2048

[[node]]
name = "llama"
kind = "llamacpp"
ttft = "5ms"
tokens_per_second = 400
[[node.model]]
id = "llama3:latest"
context = 4096
`;

const KEY = 'sk-webui';
const SCOPED_KEY = 'sk-embed-only';
let env: FleetAndGateway;
let client: Ollama;

before(async () => {
  env = await startFleetAndGateway(FLEET, (sim) =>
    [
      '[server]',
      'listen = "127.0.0.1:0"',
      '[health]',
      'interval = "200ms"',
      'timeout = "5s"',
      '[discovery]',
      'interval = "300ms"',
      'timeout = "5s"',
      '[[tenants]]',
      'name = "webui"',
      `keys = ["${KEY}"]`,
      '[[tenants]]',
      'name = "embedder"',
      `keys = ["${SCOPED_KEY}"]`,
      'models = ["nomic-*"]',
      `[[nodes]]\nname = "olla"\nurl = "${sim.url('olla')}"\nkind = "ollama"`,
      `[[nodes]]\nname = "llama"\nurl = "${sim.url('llama')}"\nkind = "llamacpp"`,
    ].join('\n'),
  );
  await untilListed(env.gw, 2, 'every node listed');
  client = new Ollama({ host: env.gw.url, headers: { Authorization: `Bearer ${KEY}` } });
});

after(async () => {
  await env?.close();
});

test('chat streams NDJSON chunks to a final done object, from the Ollama node', async () => {
  const stream = await client.chat({
    model: 'llama3',
    messages: [{ role: 'user', content: 'hello there' }],
    stream: true,
    options: { num_predict: 5 },
  });
  const parts: string[] = [];
  let last: { done: boolean; eval_count: number; prompt_eval_count: number; done_reason: string } | undefined;
  for await (const part of stream) {
    parts.push(part.message.content);
    last = part;
  }
  assert.equal(last?.done, true);
  assert.equal(last?.eval_count, 5);
  assert.ok((last?.prompt_eval_count ?? 0) > 0);
  assert.ok(parts.length >= 5, `got ${parts.length} chunks`);
  assert.ok(parts.join('').length > 0);
});

test('generate, embed and show are routed by model; show names the context length', async () => {
  const generated = await client.generate({
    model: 'llama3:latest',
    prompt: 'once upon a time',
    stream: false,
    options: { num_predict: 3 },
  });
  assert.equal(generated.done, true);
  assert.equal(generated.model, 'llama3:latest');
  assert.equal(generated.eval_count, 3);
  assert.ok((generated.response ?? '').length > 0);
  const embedded = await client.embed({ model: 'nomic-embed-text', input: ['first', 'second'] });
  assert.equal(embedded.embeddings.length, 2);
  assert.ok((embedded.embeddings[0]?.length ?? 0) > 0);
  const shown = await client.show({ model: 'llama3' });
  // The client types model_info as a Map; on the wire it is a JSON object.
  const info: unknown = shown.model_info;
  assert.equal((info as Record<string, unknown>)['llama.context_length'], 4096);
});

test('list and ps are answered by the gateway in Ollama’s shapes, within the tenant’s scope', async () => {
  const listed = await client.list();
  assert.deepEqual(
    listed.models.map((m) => m.name),
    ['llama3:latest', 'nomic-embed-text:latest'],
  );
  const entry = listed.models[0];
  assert.equal(entry?.model, 'llama3:latest');
  assert.equal(typeof entry?.modified_at, 'string');
  assert.equal(typeof entry?.size, 'number');
  assert.equal(typeof entry?.digest, 'string');
  assert.equal(typeof entry?.details.family, 'string');
  // Both models were used above, so the node reports both loaded (its /api/ps, polled).
  await eventually(async () => (await client.ps()).models.length === 2, 10_000, 'both models loaded in /api/ps');
  const running = await client.ps();
  const loaded: unknown = running.models.find((m) => m.name === 'llama3:latest');
  assert.equal((loaded as { context_length?: number } | undefined)?.context_length, 4096);
  const scoped = new Ollama({ host: env.gw.url, headers: { Authorization: `Bearer ${SCOPED_KEY}` } });
  assert.deepEqual(
    (await scoped.list()).models.map((m) => m.name),
    ['nomic-embed-text:latest'],
  );
  assert.deepEqual(
    (await scoped.ps()).models.map((m) => m.name),
    ['nomic-embed-text:latest'],
  );
  assert.match((await client.version()).version, /^\d+\.\d+\.\d+$/);
});

test('an unknown model is Ollama’s 404 "model \'x\' not found"; a missing key is 401 in its shape', async () => {
  await assert.rejects(client.chat({ model: 'mistral', messages: [{ role: 'user', content: 'hi' }] }), (error: unknown) => {
    const e = error as { name?: string; status_code?: number; error?: string };
    assert.equal(e.name, 'ResponseError', String(error));
    assert.equal(e.status_code, 404);
    assert.equal(e.error, "model 'mistral' not found");
    return true;
  });
  const anonymous = new Ollama({ host: env.gw.url });
  await assert.rejects(anonymous.list(), (error: unknown) => {
    const e = error as { status_code?: number; error?: string };
    assert.equal(e.status_code, 401);
    assert.match(String(e.error), /API key/);
    return true;
  });
});

test('a prompt no node can hold is refused by the gateway’s guard, in Ollama’s error shape', async () => {
  // The guard judges by the context the gateway learned of the Ollama node (its capacity read,
  // after the model loaded): on a busy machine that read may trail the first chat.
  await untilEvent(
    async () => ((await hostsOf(env.gw.url)).hosts.find((h) => h.name === 'olla')?.models['llama3:latest']?.n_ctx ?? 0) > 0,
    [nodeChanges(env.gw)],
    'the gateway knows llama3’s context on olla',
  );
  const long = 'word '.repeat(16000);
  await assert.rejects(
    client.chat({ model: 'llama3', messages: [{ role: 'user', content: long }], options: { num_predict: 8 } }),
    (error: unknown) => {
      const e = error as { name?: string; status_code?: number; error?: string };
      assert.equal(e.name, 'ResponseError', String(error));
      assert.equal(e.status_code, 400);
      assert.match(String(e.error), /maximum context length is 4096 tokens/);
      return true;
    },
  );
});

test('a pull (and every model-changing call) is refused 403 with a clear message', async () => {
  await assert.rejects(client.pull({ model: 'llama3.2', stream: false }), (error: unknown) => {
    const e = error as { status_code?: number; error?: string };
    assert.equal(e.status_code, 403);
    assert.match(String(e.error), /\/api\/pull changes a node's models/);
    return true;
  });
  await assert.rejects(
    client.delete({ model: 'llama3' }),
    (error: unknown) => (error as { status_code?: number }).status_code === 403,
  );
  await assert.rejects(
    client.copy({ source: 'llama3', destination: 'x' }),
    (error: unknown) => (error as { status_code?: number }).status_code === 403,
  );
  const asked = await simRequests(env.sim.url('olla'));
  assert.deepEqual(
    asked.filter((r) => ['/api/pull', '/api/delete', '/api/copy'].includes(r.path)),
    [],
  );
});

test('the llama-server node that lists the model is excluded with endpoint_unsupported, and never asked /api/*', async () => {
  const explained = await env.gw.explain('model=llama3:latest&endpoint=/api/chat');
  const llama = explained.nodes.find((n) => n.node === 'llama');
  assert.equal(llama?.verdict, 'excluded');
  assert.equal(llama?.reason, 'endpoint_unsupported');
  assert.match(String(llama?.detail), /its kind \(llamacpp\) does not serve POST \/api\/chat/);
  assert.equal(explained.nodes.find((n) => n.node === 'olla')?.verdict, 'eligible');
  const asked = await simRequests(env.sim.url('llama'));
  assert.deepEqual(
    asked.filter((r) => r.path.startsWith('/api/')),
    [],
  );
});

test('the native requests are counted by endpoint', async () => {
  const metrics = await env.gw.metrics();
  const count = (endpoint: string, status: string): number =>
    Number(
      new RegExp(
        `gateway_endpoint_requests_total\\{endpoint="${endpoint.replace(/\//g, '\\/')}",status="${status}"\\} (\\d+)`,
      ).exec(metrics)?.[1] ?? 0,
    );
  const shown = metrics
    .split('\n')
    .filter((l) => l.includes('endpoint_requests'))
    .join('\n');
  assert.ok(count('/api/chat', '200') >= 1, shown);
  assert.ok(count('/api/generate', '200') >= 1, shown);
  assert.ok(count('/api/embed', '200') >= 1, shown);
  assert.ok(count('/api/show', '200') >= 1, shown);
  assert.ok(count('/api/chat', '404') >= 1, shown);
});
