import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, type GatewayUnderTest } from '#test/fixtures/in-process-fleet.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { startSlotCountingNode, type SlotCountingNode } from '#test/fixtures/slot-counting-node.ts';
import { waitForHost } from '#test/fixtures/context.ts';

let node: SlotCountingNode;
let gw: GatewayUnderTest;
before(async () => {
  node = await startSlotCountingNode({ slots: 3, holdMs: 20 });
  gw = await startGateway(gatewayToml([{ name: 'n', url: node.url, kind: 'llamacpp' }], '', 'workers = 2'));
  await waitForHost(gw.url, 'n', (h) => h.models?.m?.slots === 3, 'slots known');
});
after(async () => {
  await gw?.close();
  await node?.close();
});
test('smoke', async () => {
  const results = await Promise.all(Array.from({ length: 50 }, (_, i) => httpJson('POST', `${gw.url}/v1/chat/completions`, { model: 'm', user: `u${i}`, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 })));
  assert.deepEqual([...new Set(results.map((r) => r.status))], [200]);
  assert.ok(node.seen.peak <= 3, `peak ${node.seen.peak}`);
  console.log(node.seen.peak, (await gw.metrics()).split('\n').filter((l) => l.startsWith('gateway_requests_total')));
});
