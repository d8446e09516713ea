// The wake path: sleeping nodes are woken on demand (real magic packets to a UDP listener on
// loopback), requests are held for them, and nothing is woken for a request no sleeper can serve.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { unusedPort as freePort } from '#test/fixtures/context.ts';
import { onEmitter, untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges } from '#test/fixtures/gateway-waits.ts';

const MAC = '0a:1b:2c:3d:4e:5f';

interface PacketLog {
  readonly socket: Socket;
  port: number;
  readonly packets: Buffer[];
  onPacket: (() => void) | undefined;
}

async function udpListener(): Promise<PacketLog> {
  const socket = createSocket('udp4');
  const log: PacketLog = { socket, port: 0, packets: [], onPacket: undefined };
  socket.on('message', (msg) => {
    log.packets.push(msg);
    log.onPacket?.();
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  log.port = socket.address().port;
  return log;
}

let udp: PacketLog;
let sleeperPort: number;
let neverPort: number;
let gw: GatewayUnderTest;
let awake: SimFleet | undefined;
let known: SimFleet | undefined;

const statusOf = async (node: string): Promise<string> =>
  (await httpJson('GET', `${gw.url}/health`))
    .json<{ details: { name: string; status: string }[] }>()
    .details.find((d) => d.name === node)?.status ?? '';

before(async () => {
  udp = await udpListener();
  sleeperPort = await freePort();
  neverPort = await freePort();
  known = await startSimFleet(`[[node]]\nname = "known"\nkind = "vllm"\nmodels = ["small-model"]\n`);
  // "sleeper" was never seen awake, so it may serve any ungrouped model once woken; "never" (group
  // lonely) wakes but never comes up; "known" (group g2) was seen serving small-model only.
  const nodes = `
[[nodes]]
name = "sleeper"
url = "http://127.0.0.1:${sleeperPort}"
kind = "vllm"
wake = { mac = "${MAC}", broadcast = "127.0.0.1:${udp.port}" }
wake_timeout = "15s"
[[nodes]]
name = "never"
url = "http://127.0.0.1:${neverPort}"
kind = "vllm"
group = "lonely"
wake = { command = ["true"] }
wake_timeout = "1s"
[[nodes]]
name = "known"
url = "${known.url('known')}"
kind = "vllm"
group = "g2"
wake = { mac = "${MAC}", broadcast = "127.0.0.1:${udp.port}" }
[[models.available]]
name = "lonely-model"
group = "lonely"
[[models.available]]
name = "small-model"
group = "g2"
[[models.available]]
name = "other-g2-model"
group = "g2"
`;
  const toml = gatewayToml([], nodes).replace('fail_threshold = 2', 'fail_threshold = 1');
  gw = await startGateway(toml);
  await untilEvent(
    async () => (await statusOf('sleeper')) === 'asleep' && (await statusOf('never')) === 'asleep',
    [nodeChanges(gw)],
    'sleepers asleep',
  );
  await untilEvent(async () => (await statusOf('known')) === 'healthy', [nodeChanges(gw)], 'known healthy');
  await untilEvent(
    async () => {
      const health = (await httpJson('GET', `${gw.url}/health`)).json<{
        details: { name: string; models: { state: string } }[];
      }>();
      return health.details.find((d) => d.name === 'known')?.models.state === 'known';
    },
    [nodeChanges(gw)],
    'known listed',
  );
  // Put the known node to sleep: it keeps its last listing (small-model) but no longer answers.
  await known.close();
  known = undefined;
  await untilEvent(async () => (await statusOf('known')) === 'asleep', [nodeChanges(gw)], 'known asleep');
});

after(async () => {
  await gw?.close();
  await awake?.close();
  await known?.close();
  udp?.socket.close();
});

function isMagicPacketFor(packet: Buffer, mac: string): boolean {
  const macBytes = Buffer.from(mac.split(':').map((h) => Number.parseInt(h, 16)));
  if (packet.length !== 102 || !packet.subarray(0, 6).equals(Buffer.alloc(6, 0xff))) return false;
  for (let i = 0; i < 16; i++) if (!packet.subarray(6 + i * 6, 12 + i * 6).equals(macBytes)) return false;
  return true;
}

test('one wake per window under 100 concurrent requests, and the held requests reach the node once it is up', async () => {
  const before = udp.packets.length;
  udp.onPacket = () => {
    udp.onPacket = undefined;
    // The "machine" boots 500 ms after the magic packet.
    setTimeout(() => {
      void startSimFleet(
        `[[node]]\nname = "sleeper"\nkind = "vllm"\nport = ${sleeperPort}\nmodels = ["big-model"]\nttft = "5ms"\n`,
      ).then((s) => {
        awake = s;
      });
    }, 500);
  };
  const requests = Array.from({ length: 100 }, () =>
    httpJson('POST', `${gw.url}/v1/chat/completions`, { model: 'big-model', messages: [{ role: 'user', content: 'wake up' }] }),
  );
  const answers = await Promise.all(requests);
  const statuses = answers.map((a) => a.status);
  assert.deepEqual(
    [...new Set(statuses)],
    [200],
    `statuses: ${JSON.stringify(statuses.filter((s) => s !== 200))} ${answers.find((a) => a.status !== 200)?.text ?? ''}`,
  );
  assert.deepEqual([...new Set(answers.map((a) => a.headers['x-switchyard-node']))], ['sleeper']);
  const magic = udp.packets.slice(before);
  assert.equal(magic.length, 1, 'exactly one magic packet');
  assert.ok(isMagicPacketFor(magic[0] ?? Buffer.alloc(0), MAC), `bytes: ${magic[0]?.toString('hex')}`);
  const metrics = (await httpJson('GET', `${gw.url}/metrics`)).text;
  assert.match(metrics, /gateway_wakes_total\{node="sleeper",result="sent"\} 1/);
});

test('a node that does not wake in time leaves its held requests a 503 with Retry-After', async () => {
  const started = Date.now();
  const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, {
    model: 'lonely-model',
    messages: [{ role: 'user', content: 'x' }],
  });
  assert.equal(res.status, 503, res.text);
  assert.ok(Number(res.headers['retry-after']) >= 1);
  assert.match(res.json<{ error: { message: string } }>().error.message, /woke up/);
  assert.ok(Date.now() - started >= 900, 'it waited for the wake window');
});

test('a model no sleeping node ever served wakes nothing and gets its answer at once', async () => {
  const before = udp.packets.length;
  const started = Date.now();
  const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, {
    model: 'other-g2-model',
    messages: [{ role: 'user', content: 'x' }],
  });
  // known's wake window is the default 120 s: a generous bound (half of it) still shows nothing waited for it.
  assert.ok(Date.now() - started < 60_000, 'answered without waiting for a wake');
  assert.equal(res.status, 404, `no node's last listing has it: unknown (issue 38 item 10): ${res.text}`);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(udp.packets.length, before, 'no magic packet');
  const hosts = (await httpJson('GET', `${gw.url}/admin/hosts`)).json<{
    hosts: { name: string; wake: { waking: boolean } | null }[];
  }>();
  assert.equal(hosts.hosts.find((h) => h.name === 'known')?.wake?.waking, false);
});

test('POST /admin/wake sends a wake by hand and /admin/hosts shows when', async () => {
  const before = udp.packets.length;
  const res = await httpJson('POST', `${gw.url}/admin/wake?node=known`);
  assert.equal(res.status, 202, res.text);
  await untilEvent(() => udp.packets.length > before, [onEmitter(udp.socket, 'the wake listener', 'message')], 'a magic packet');
  const hosts = (await httpJson('GET', `${gw.url}/admin/hosts`)).json<{
    hosts: { name: string; wake: { waking: boolean; last_sent_at: string | null } | null }[];
  }>();
  const known = hosts.hosts.find((h) => h.name === 'known');
  assert.equal(known?.wake?.waking, true);
  assert.ok(known?.wake?.last_sent_at);
  assert.equal((await httpJson('POST', `${gw.url}/admin/wake?node=nope`)).status, 404);
});
