// Issue 10, item 8: a node URL's path prefix (`url = "http://host:9000/openai"`) was kept for health,
// listing and /props but dropped for inference: `POST /v1/chat/completions` went to the server root.
// Every upstream request now goes below the prefix.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { nodePathPrefix } from '#src/config/index.ts';
import { startInProcessGateway, type InProcessGateway } from '#test/fixtures/in-process.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { listings } from '#test/fixtures/gateway-waits.ts';

const PREFIX = '/openai';
const paths: string[] = [];
let server: Server;
let gw: InProcessGateway;

before(async () => {
  // Serves only below the prefix, like a server behind a path-routing proxy.
  server = createServer((req, res) => {
    paths.push(`${req.method} ${req.url}`);
    req.resume();
    const json = (value: unknown): void => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    };
    if (!req.url?.startsWith(`${PREFIX}/`)) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('no such path');
    if (req.url === `${PREFIX}/v1/models`) return json({ object: 'list', data: [{ id: 'm', object: 'model' }] });
    if (req.method === 'GET') return json({ status: 'ok' });
    json({
      id: 'x',
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  gw = await startInProcessGateway(
    `[server]\nlisten = "127.0.0.1:0"\n[[nodes]]\nname = "a"\nurl = "http://127.0.0.1:${port}${PREFIX}/"\nkind = "vllm"\n`,
  );
  await untilEvent(
    async () => (await httpJson('GET', `${gw.url}/v1/models`)).text.includes('"m"'),
    [listings(gw)],
    'the model listed',
  );
});

after(async () => {
  await gw?.close();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
});

test('inference goes below the node URL’s path prefix, like health and listing', async () => {
  const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, {
    model: 'm',
    messages: [{ role: 'user', content: 'hi' }],
  });
  assert.equal(res.status, 200, res.text);
  assert.ok(paths.includes(`POST ${PREFIX}/v1/chat/completions`), paths.join('\n'));
  assert.deepEqual(
    paths.filter((p) => !p.includes(PREFIX)),
    [],
    'no request left the prefix',
  );
});

test('the prefix of a normalised node URL', () => {
  const table: [string, string][] = [
    ['http://10.0.0.5:8000', ''],
    ['http://10.0.0.5:8000/openai', '/openai'],
    ['https://[::1]:9000/a/b', '/a/b'],
  ];
  for (const [url, prefix] of table) assert.equal(nodePathPrefix(url), prefix, url);
});
