// Issue 40, item 2: a node whose kind is taken to speak /v1/messages (an SGLang of unknown
// version; the simulator's is one from before its Anthropic router) but that answers it with a
// route-level 404 used to fail that first request — 404 endpoint_unsupported to Claude Code, since
// the model's other node (kind `openai`) speaks only Chat Completions — and only the model's later
// requests were translated, once the 404 was learned. Now the failover that ends with every node
// asked having answered a route-level 404 re-chooses the same request as translated, before any
// byte reached the client: the very first `messages.create` (and a first `messages.stream`)
// succeeds over /v1/chat/completions, the SGLang node asked /v1/messages once and never again. The
// same holds with `[server] workers = 2`, where the worker's view of the fleet learns the 404
// later than the main thread's registry.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { requestEnds, untilListed } from '#test/fixtures/gateway-waits.ts';
import { httpJson, simRequests } from '#test/fixtures/http.ts';

const TRANSLATED_HEADER = 'messages->chat';

const simNode = (name: string, kind: string, model: string): string =>
  `[[node]]\nname = "${name}"\nkind = "${kind}"\nttft = "5ms"\ntokens_per_second = 400\nanswers = "natural"\n` +
  `[[node.model]]\nid = "${model}"\ncontext = 32768\n`;

/** Per model, one SGLang node (taken to speak /v1/messages) and one Chat Completions node: `coder` for JSON, `writer` for a stream. */
const NODES = [
  { name: 'sg', kind: 'sglang', model: 'coder' },
  { name: 'chat', kind: 'openai', model: 'coder' },
  { name: 'sg-w', kind: 'sglang', model: 'writer' },
  { name: 'chat-w', kind: 'openai', model: 'writer' },
] as const;

async function start(workers: number): Promise<FleetAndGateway> {
  const env = await startFleetAndGateway(NODES.map((n) => simNode(n.name, n.kind, n.model)).join('\n'), (sim) =>
    [
      `[server]\nlisten = "127.0.0.1:0"\nworkers = ${workers}`,
      '[health]\ninterval = "200ms"\ntimeout = "5s"',
      // Listings every 30 s: a new listing would (rightly) try the endpoint again.
      '[discovery]\ninterval = "30s"\ntimeout = "5s"',
      ...NODES.map((n) => `[[nodes]]\nname = "${n.name}"\nurl = "${sim.url(n.name)}"\nkind = "${n.kind}"`),
    ].join('\n'),
  );
  try {
    await untilListed(env.gw, NODES.length, 'every node listed');
  } catch (error) {
    await env.close();
    throw error;
  }
  return env;
}

const posts = async (env: FleetAndGateway, node: string): Promise<string[]> =>
  (await simRequests(env.sim.url(node))).filter((r) => r.method === 'POST').map((r) => r.path);

interface Logged {
  request_id: string;
  translated?: string;
  status: number;
  attempts: { node: string; outcome: string; status?: number }[];
}

for (const workers of [1, 2]) {
  describe(`workers = ${workers}`, () => {
    let env: FleetAndGateway;
    let client: Anthropic;

    before(async () => {
      env = await start(workers);
      client = new Anthropic({ baseURL: env.gw.url, apiKey: 'unused', maxRetries: 0, timeout: 20_000 });
    });

    after(async () => {
      await env?.close();
    });

    test('the first Messages request, refused by the SGLang node with a route-level 404, is served translated', async () => {
      const { data, response } = await client.messages
        .create({ model: 'coder', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] })
        .withResponse();
      assert.equal(data.type, 'message');
      assert.equal(data.model, 'coder');
      assert.match(data.id, /^msg_/);
      assert.ok(
        data.content.some((block) => block.type === 'text' && block.text.length > 0),
        JSON.stringify(data.content),
      );
      assert.equal(response.headers.get('x-switchyard-translated'), TRANSLATED_HEADER);
      assert.ok(['sg', 'chat'].includes(String(response.headers.get('x-switchyard-node'))));
      const asked = [...(await posts(env, 'sg')), ...(await posts(env, 'chat'))];
      assert.deepEqual(
        asked.filter((p) => p === '/v1/messages'),
        ['/v1/messages'],
        'the SGLang node was asked /v1/messages once',
      );
      assert.deepEqual(
        asked.filter((p) => p !== '/v1/messages'),
        ['/v1/chat/completions'],
        'then the request was sent once, translated',
      );
      // The request log names both attempts: the 404 that was failed over, then the translated answer.
      const requestId = String(response.headers.get('x-request-id'));
      let logged: Logged | undefined;
      await untilEvent(
        async () => {
          const { requests } = (await httpJson('GET', `${env.gw.url}/admin/requests?limit=100`)).json<{ requests: Logged[] }>();
          logged = requests.find((r) => r.request_id === requestId);
          return logged !== undefined;
        },
        [requestEnds(env.gw)],
        'the request in the ring',
      );
      assert.equal(logged?.translated, 'messages→chat');
      assert.equal(logged?.status, 200);
      assert.deepEqual(
        logged?.attempts.map((a) => [a.outcome, a.status]),
        [
          ['endpoint_missing', 404],
          ['success', 200],
        ],
      );
      assert.equal(logged?.attempts[0]?.node, 'sg');
    });

    test('the model’s later Messages requests are translated at once: the SGLang node is not asked /v1/messages again', async () => {
      for (let i = 0; i < 3; i += 1) {
        const { data, response } = await client.messages
          .create({ model: 'coder', max_tokens: 16, messages: [{ role: 'user', content: `hi ${i}` }] })
          .withResponse();
        assert.equal(data.type, 'message');
        assert.equal(response.headers.get('x-switchyard-translated'), TRANSLATED_HEADER);
      }
      assert.equal((await posts(env, 'sg')).filter((p) => p === '/v1/messages').length, 1);
      assert.equal((await posts(env, 'chat')).filter((p) => p === '/v1/messages').length, 0);
    });

    test('a first streamed Messages request is re-chosen the same way: Anthropic’s events, no byte of the 404', async () => {
      const stream = client.messages.stream({ model: 'writer', max_tokens: 16, messages: [{ role: 'user', content: 'say hi' }] });
      const kinds: string[] = [];
      stream.on('streamEvent', (event) => kinds.push(event.type));
      const final = await stream.finalMessage();
      assert.equal(final.type, 'message');
      assert.ok(final.usage.output_tokens > 0);
      assert.equal(kinds[0], 'message_start');
      assert.equal(kinds.at(-1), 'message_stop');
      const { response } = await stream.withResponse();
      assert.equal(response.headers.get('x-switchyard-translated'), TRANSLATED_HEADER);
      const asked = [...(await posts(env, 'sg-w')), ...(await posts(env, 'chat-w'))];
      assert.equal(asked.filter((p) => p === '/v1/messages').length, 1);
      assert.equal(asked.filter((p) => p === '/v1/chat/completions').length, 1);
    });
  });
}
