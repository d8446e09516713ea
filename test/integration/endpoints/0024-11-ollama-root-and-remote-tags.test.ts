// Issue 24, item 2 (Ollama details): `GET /` on the gateway was its OpenAI-shaped 404, where an
// Ollama answers "Ollama is running" (the `ollama` CLI's heartbeat is `HEAD /`); and `/api/tags`
// listed only this site's Ollama models, though `/v1/models` lists the remote sites' ([mesh]) and
// a request for them is forwarded. Now `GET`/`HEAD /` answer as Ollama to any client but a browser
// (an `Accept` naming text/html keeps the 404, pointing at the dashboard), and `/api/tags` adds the
// models only remote sites serve, marked as Ollama marks a remote model (`remote_host`, `remote_model`).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { httpJson } from '#test/fixtures/http.ts';
import { TwoSiteMesh } from '#test/fixtures/two-site-mesh.ts';

const mesh = new TwoSiteMesh({ heartbeatMs: 200, freshnessMs: 2_000 });

before(async () => {
  await mesh.start();
  await mesh.waitListed('a', 'm-c', 'c');
});
after(() => mesh.close());

test('GET / and HEAD / answer as Ollama; a browser gets the 404 that points at the dashboard', async () => {
  const a = mesh.site('a').gw.url;
  const plain = await request(`${a}/`, { signal: AbortSignal.timeout(30_000) });
  assert.equal(plain.statusCode, 200);
  assert.equal(plain.headers['content-type'], 'text/plain; charset=utf-8');
  assert.equal(await plain.body.text(), 'Ollama is running');
  const head = await request(`${a}/`, { method: 'HEAD', signal: AbortSignal.timeout(30_000) });
  assert.equal(head.statusCode, 200);
  assert.equal(await head.body.text(), '');
  const browser = await httpJson('GET', `${a}/`, undefined, { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' });
  assert.equal(browser.status, 404);
  assert.match(browser.text, /dashboard is at \/admin\//);
});

test('/api/tags lists the models only a remote site serves, marked remote', async () => {
  const tags = (await httpJson('GET', `${mesh.site('a').gw.url}/api/tags`)).json<{
    models: { name: string; remote_host?: string; remote_model?: string }[];
  }>();
  const remote = tags.models.find((m) => m.name === 'm-c');
  assert.ok(remote !== undefined, JSON.stringify(tags));
  assert.equal(remote.remote_host, 'switchyard:c');
  assert.equal(remote.remote_model, 'm-c');
});
