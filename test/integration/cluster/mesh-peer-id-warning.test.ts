// Issue 26, [mesh] with [cluster]: replicas that share the site key's libp2p peer id are heard one
// at a time by a peer site (test/integration/cluster/0026-12 shows what that costs). A replica started so
// says it once, as a warning naming the fix ([mesh] peer_key_file); a gateway without [cluster]
// does not.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryBus } from '#src/mesh/index.ts';
import { newSiteKey } from '#src/mesh/site-key-file.ts';
import { gatewayToml, meshToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway } from '#test/fixtures/in-process-fleet.ts';
import { clusterTable } from '#test/fixtures/cluster-replicas.ts';
import { startRedisServer, type RedisServer } from '#test/fixtures/redis-server.ts';

const WARNING = /no \[mesh\] peer_key_file: every replica of this site shares the site key's libp2p peer id/;
const key = newSiteKey();
const mesh = meshToml('a', [{ id: 'b', publicKey: newSiteKey().publicKey }]);
const nodes = [{ name: 'n', url: 'http://127.0.0.1:9', kind: 'vllm' }];

let redis: RedisServer | undefined;
before(async () => {
  redis = await startRedisServer();
});
after(async () => {
  await redis?.stop();
});

test('a replica of a mesh site without its own peer key warns once; a lone site does not', async () => {
  const bus = new MemoryBus();
  for (const [cluster, warned] of [
    [clusterTable(redis?.url ?? '', 'r0', 'warn-test:', '3s'), 1],
    ['', 0],
  ] as const) {
    const gw = await startGateway(gatewayToml(nodes, `${mesh}\n${cluster}`, 'api_keys = ["k-1"]'), {
      meshGossip: { key, transport: () => bus.transport('peer-a') },
    });
    try {
      const lines = gw.logs().filter((l) => typeof l.msg === 'string' && WARNING.test(l.msg));
      assert.equal(lines.length, warned, cluster === '' ? 'without [cluster]' : 'with [cluster]');
      if (warned === 1) assert.equal(lines[0]?.level, 40, 'a warning');
    } finally {
      await gw.close();
    }
  }
});
