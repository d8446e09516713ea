// Issue 24, item 1: which node speaks which endpoint is kind knowledge, and a `kind = "openai"` node's
// set is the operator's to say (`[[nodes]] endpoints`): before, the key was refused as unknown and
// no route told the endpoints apart. Here an OpenAI-compatible proxy configured to serve
// `/v1/messages` takes the Messages request (its kind alone would not), and its Anthropic stream
// reaches the client byte for byte — the node's own bytes, with only the model's value rewritten
// in the request (an alias) and `anthropic-version` / `anthropic-beta` passed through. A bad
// endpoint name is a config problem that names the allowed ones.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { loadConfig } from '#src/config-tables.ts';
import { startScriptedNode, writeInTurn, type InferenceScript } from '#test/fixtures/scripted-node.ts';
import { startInProcessGateway } from '#test/fixtures/in-process.ts';

/** An Anthropic stream in the node's own spelling (spacing, key order, a `ping`), split over writes. */
const STREAM = [
  'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":9,"output_tokens":1}}}\n\n',
  'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
  'event: ping\ndata: {"type": "ping"}\n\n',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}\n\n',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo \\u00e9"}}\n\n',
  'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
  'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}\n\n',
  'event: message_stop\ndata: {"type":"message_stop"}\n\n',
];

test('[[nodes]] endpoints is validated and names the endpoints it accepts', () => {
  const node = (endpoints: string): string =>
    `[[nodes]]\nname = "a"\nurl = "http://127.0.0.1:1"\nkind = "openai"\nendpoints = ${endpoints}\n`;
  const good = loadConfig(node('["/v1/chat/completions", "/v1/messages"]'), {});
  assert.ok(good.ok, JSON.stringify(good));
  assert.deepEqual(good.config.nodes[0]?.endpoints, ['/v1/chat/completions', '/v1/messages']);
  const bad = loadConfig(node('["/v1/messages", "/v1/message"]'), {});
  assert.ok(!bad.ok);
  assert.match(
    bad.problems.map((p) => `${p.path}: ${p.message}`).join('\n'),
    /nodes\[0\]\.endpoints\[1\]: must be one of: \/v1\/chat\/completions, .*\/v1\/messages, \/v1\/messages\/count_tokens/,
  );
  const empty = loadConfig(node('[]'), {});
  assert.ok(!empty.ok);
});

test('an openai node configured for /v1/messages streams the node’s own bytes to the client', async () => {
  const seen: { body?: string; headers?: Record<string, unknown> } = {};
  const script: InferenceScript = (req, res, body) => {
    seen.body = body.toString('utf8');
    seen.headers = { ...req.headers };
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    writeInTurn(res, STREAM);
  };
  const node = await startScriptedNode(script);
  const toml = [
    '[server]\nlisten = "127.0.0.1:0"\ndrain_timeout = "0s"',
    '[health]\ninterval = "1s"',
    '[models]\n[[models.available]]\nname = "m"\naliases = ["claude-sonnet-5"]',
    `[[nodes]]\nname = "proxy"\nurl = "${node.url}"\nkind = "openai"\nendpoints = ["/v1/chat/completions", "/v1/messages"]`,
  ].join('\n');
  let gw: Awaited<ReturnType<typeof startInProcessGateway>> | undefined;
  try {
    gw = await startInProcessGateway(toml);
    assert.ok(await gw.gateway.firstRoundDone(15_000));
    // The client's bytes: odd spacing and a big integer the gateway must not re-serialise.
    const sent =
      '{ "model" : "claude-sonnet-5", "max_tokens": 16, "stream": true, "metadata": {"n": 12345678901234567890},\n "messages": [{"role": "user", "content": "hi"}] }';
    const res = await request(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'prompt-caching-2024-07-31',
      },
      body: sent,
      signal: AbortSignal.timeout(20_000),
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['x-switchyard-node'], 'proxy');
    const received = Buffer.from(await res.body.arrayBuffer()).toString('utf8');
    assert.equal(received, STREAM.join(''), 'byte for byte what the node sent');
    assert.equal(seen.body, sent.replace('"claude-sonnet-5"', '"m"'), 'only the model value rewritten');
    assert.equal(seen.headers?.['anthropic-version'], '2023-06-01');
    assert.equal(seen.headers?.['anthropic-beta'], 'prompt-caching-2024-07-31');
    // count_tokens is not in this node's list: no node counts natively, so the gateway answers it
    // (issue 40: from its upper bound, the node having no tokenizer) without asking the node.
    const count = await request(`${gw.url}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const counted = (await count.body.json()) as { input_tokens?: number };
    assert.equal(count.statusCode, 200);
    assert.equal(count.headers['x-switchyard-count'], 'bound');
    assert.ok(typeof counted.input_tokens === 'number' && counted.input_tokens >= 1, JSON.stringify(counted));
    assert.equal(node.seen.requests, 1);
  } finally {
    await gw?.close();
    await node.close();
  }
});
