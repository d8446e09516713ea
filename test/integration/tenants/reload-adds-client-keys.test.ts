// The client check is a request feature, present only when the config has client keys
// (src/plane/request-features.ts): a reload that adds the first key must put it in front of every
// keyed route at once, and one that removes the last must open them again — on one event loop and
// with request workers (each rebuilds its public table).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startInProcessGateway } from '#test/fixtures/in-process.ts';
import { startRecordingUpstream } from '#test/fixtures/recording-upstream.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';

const chat = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

for (const workers of [1, 2]) {
  test(`a reload that adds the first client key closes the open gateway, and removing it opens it (workers = ${workers})`, async () => {
    const upstream = await startRecordingUpstream(['m']);
    const config = (keys: string): string =>
      gatewayToml([{ name: 'n', url: upstream.url, kind: 'vllm' }], '[admin]\ntoken = "a-1"\n', `${keys}\nworkers = ${workers}`);
    const gw = await startInProcessGateway(config(''));
    try {
      await eventually(
        async () =>
          (await httpJson('GET', `${gw.url}/admin/hosts`, undefined, bearer('a-1'))).json<{
            hosts: { discovery: { state: string } }[];
          }>().hosts[0]?.discovery.state === 'known',
        15_000,
        'the node listed',
      );
      // Several requests each: with workers, each may land on another thread.
      const statuses = async (method: 'GET' | 'POST', path: string, headers: Record<string, string>): Promise<number[]> =>
        Promise.all(
          Array.from(
            { length: 4 },
            async () => (await httpJson(method, `${gw.url}${path}`, method === 'POST' ? chat : undefined, headers)).status,
          ),
        );
      assert.deepEqual(await statuses('POST', '/v1/chat/completions', {}), [200, 200, 200, 200], 'open before the reload');

      assert.equal((await gw.reload(config('api_keys = ["k-1"]'))).ok, true);
      assert.deepEqual(await statuses('POST', '/v1/chat/completions', {}), [401, 401, 401, 401], 'no key: refused');
      assert.deepEqual(await statuses('GET', '/v1/models', {}), [401, 401, 401, 401], 'the listing too');
      assert.deepEqual(await statuses('POST', '/v1/chat/completions', bearer('k-1')), [200, 200, 200, 200], 'the new key works');

      assert.equal((await gw.reload(config(''))).ok, true);
      assert.deepEqual(await statuses('POST', '/v1/chat/completions', {}), [200, 200, 200, 200], 'open again');
      assert.deepEqual(await statuses('GET', '/v1/models', {}), [200, 200, 200, 200], 'the listing too');
    } finally {
      await gw.close();
      await upstream.close();
    }
  });
}
