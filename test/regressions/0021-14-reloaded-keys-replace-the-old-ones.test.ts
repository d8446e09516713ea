// Issue 21, item 14 (c): no test rotated a credential by reload, so a key checker that kept the
// first key set forever survived. After a reload from client key k-1 to k-2 (and admin token a-1 to
// a-2), the old ones get 401 and the new ones pass, on one event loop and with request workers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startInProcessGateway } from '#test/fixtures/in-process.ts';
import { startRecordingUpstream } from '#test/fixtures/recording-upstream.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { bearer } from '#test/fixtures/gateway-state.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges } from '#test/fixtures/gateway-waits.ts';

const chat = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };

for (const workers of [1, 2]) {
  test(`a reload that replaces the client key and the admin token refuses the old ones (workers = ${workers})`, async () => {
    const upstream = await startRecordingUpstream(['m']);
    const config = (key: string, token: string): string =>
      gatewayToml(
        [{ name: 'n', url: upstream.url, kind: 'vllm' }],
        `[admin]\ntoken = "${token}"\n`,
        `api_keys = ["${key}"]\nworkers = ${workers}`,
      );
    const gw = await startInProcessGateway(config('k-1', 'a-1'));
    try {
      await untilEvent(
        async () =>
          (await httpJson('GET', `${gw.url}/admin/hosts`, undefined, bearer('a-1'))).json<{
            hosts: { discovery: { state: string } }[];
          }>().hosts[0]?.discovery.state === 'known',
        [nodeChanges(gw)],
        'the node listed',
      );
      // Several requests each: with workers, each may land on another thread.
      const statuses = async (url: string, method: 'GET' | 'POST', body: unknown, key: string): Promise<number[]> =>
        Promise.all(Array.from({ length: 4 }, async () => (await httpJson(method, url, body, bearer(key))).status));
      assert.deepEqual(
        await statuses(`${gw.url}/v1/chat/completions`, 'POST', chat, 'k-1'),
        [200, 200, 200, 200],
        'k-1 before the reload',
      );
      assert.deepEqual(
        await statuses(`${gw.url}/admin/hosts`, 'GET', undefined, 'a-1'),
        [200, 200, 200, 200],
        'a-1 before the reload',
      );

      const outcome = await gw.reload(config('k-2', 'a-2'));
      assert.equal(outcome.ok, true, JSON.stringify(outcome));

      assert.deepEqual(
        await statuses(`${gw.url}/v1/chat/completions`, 'POST', chat, 'k-1'),
        [401, 401, 401, 401],
        'the old client key is refused',
      );
      assert.deepEqual(
        await statuses(`${gw.url}/v1/chat/completions`, 'POST', chat, 'k-2'),
        [200, 200, 200, 200],
        'the new client key works',
      );
      assert.deepEqual(
        await statuses(`${gw.url}/admin/hosts`, 'GET', undefined, 'a-1'),
        [401, 401, 401, 401],
        'the old admin token is refused',
      );
      assert.deepEqual(
        await statuses(`${gw.url}/admin/hosts`, 'GET', undefined, 'a-2'),
        [200, 200, 200, 200],
        'the new admin token works',
      );
      assert.deepEqual(
        await statuses(`${gw.url}/metrics`, 'GET', undefined, 'a-1'),
        [401, 401, 401, 401],
        '/metrics follows the admin token',
      );
    } finally {
      await gw.close();
      await upstream.close();
    }
  });
}
