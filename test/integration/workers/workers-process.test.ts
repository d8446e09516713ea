// `switchyard serve` with `[server] workers = 2`, as a real process: a SIGHUP reload reaches both
// request workers, and SIGTERM lets the requests in flight on every worker finish before exit 0.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { Agent, request } from 'undici';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGatewayProcess, type GatewayProcess } from '#test/fixtures/processes.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';
import { startSlotCountingNode, type SlotCountingNode } from '#test/fixtures/slot-counting-node.ts';
import { untilEvent } from '#test/fixtures/events.ts';

let a: SlotCountingNode;
let b: SlotCountingNode;
let gw: GatewayProcess;

const configText = (withB: boolean): string =>
  gatewayToml(
    [{ name: 'a', url: a.url, kind: 'llamacpp' }, ...(withB ? [{ name: 'b', url: b.url, kind: 'llamacpp' }] : [])],
    '',
    'workers = 2\ndrain_timeout = "20s"',
  );

before(async () => {
  a = await startSlotCountingNode({ slots: 8, holdMs: 5, model: 'm-a' });
  b = await startSlotCountingNode({ slots: 8, holdMs: 5, model: 'm-b' });
  gw = await startGatewayProcess(configText(false));
  await untilEvent(
    async () => (await httpJson('GET', `${gw.url}/admin/hosts`)).text.includes('"m-a"'),
    [gw.process.output],
    'a listed',
  );
});

after(async () => {
  await gw?.stop();
  await a?.close();
  await b?.close();
});

/** `n` requests for `model`, each on a connection of its own (spread over both workers by the kernel). */
async function fresh(model: string, n: number): Promise<number[]> {
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const agent = new Agent({ connections: 1 });
      try {
        const res = await request(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model, user: `u${i}`, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }),
          dispatcher: agent,
          signal: AbortSignal.timeout(20_000),
        });
        await res.body.text();
        return res.statusCode;
      } finally {
        await agent.close();
      }
    }),
  );
}

test('the process says it runs two workers', () => {
  const listening = gw.logs().find((l) => l.msg === 'gateway listening');
  assert.equal(listening?.workers, 2);
});

test('a real SIGHUP reaches both workers', async () => {
  await writeFile(gw.configPath, configText(true));
  gw.process.child.kill('SIGHUP');
  await gw.process.waitForLine((l) => l.includes('"config reloaded"'));
  await untilEvent(
    async () => (await httpJson('GET', `${gw.url}/admin/hosts`)).text.includes('"m-b"'),
    [gw.process.output],
    'b listed',
  );
  assert.deepEqual([...new Set(await fresh('m-b', 16))], [200]);
  const runtime = (await httpJson('GET', `${gw.url}/admin/runtime`)).json() as { workers: { admitted: number }[] };
  assert.ok(
    runtime.workers.every((w) => w.admitted > 0),
    JSON.stringify(runtime.workers),
  );
});

test('SIGTERM: the requests in flight on every worker finish, then the process exits 0', async () => {
  a.pause();
  const inFlight = fresh('m-a', 16);
  await untilEvent(() => a.seen.running === 8, [a.changes], 'a full');
  const busy = async (): Promise<boolean> => {
    const runtime = (await httpJson('GET', `${gw.url}/admin/runtime`)).json() as { workers: { active_requests: number }[] };
    return runtime.workers.every((w) => w.active_requests > 0);
  };
  await eventually(busy, 60_000, 'both workers have requests in flight');
  gw.process.child.kill('SIGTERM');
  await gw.process.waitForLine((l) => l.includes('draining'));
  a.resume();
  assert.deepEqual([...new Set(await inFlight)], [200]);
  const code = await new Promise<number | null>((resolve) => gw.process.child.once('exit', (c) => resolve(c)));
  assert.equal(code, 0);
});
