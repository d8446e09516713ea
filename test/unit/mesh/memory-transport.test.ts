import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryBus } from '#src/mesh/index.ts';

const tick = () => new Promise((resolve) => setImmediate(resolve));
const bytes = (t: string) => new TextEncoder().encode(t);

test('memory bus: delivers to every other started member, counts bytes, reports joins', async () => {
  const bus = new MemoryBus();
  const [a, b, c] = ['a', 'b', 'c'].map((p) => bus.transport(p)) as [ReturnType<MemoryBus['transport']>, ReturnType<MemoryBus['transport']>, ReturnType<MemoryBus['transport']>];
  const got: string[] = [];
  const joins: string[] = [];
  for (const t of [a, b, c]) {
    t.onMessage((data, from) => (got.push(`${t.peer}<-${from}:${new TextDecoder().decode(data)}`), 'accept'));
    t.onPeerJoined((peer) => joins.push(`${t.peer}+${peer}`));
  }
  await a.publish(bytes('early')); // not started: dropped, not counted
  await a.start();
  await b.start();
  await tick();
  assert.deepEqual(joins.sort(), ['a+b', 'b+a']);
  await a.publish(bytes('hello'));
  await tick();
  assert.deepEqual(got, ['b<-a:hello']);
  assert.deepEqual(a.stats(), { peers: 1, bytesSent: 5, bytesReceived: 0 });
  assert.deepEqual(b.stats(), { peers: 1, bytesSent: 0, bytesReceived: 5 });
  await c.start();
  await a.stop();
  await b.publish(bytes('x'));
  await tick();
  assert.deepEqual(got, ['b<-a:hello', 'c<-b:x']);
});

test('memory bus: a partition stops delivery across it; heal reconnects and reports the peers as joined', async () => {
  const bus = new MemoryBus();
  const ts = ['a', 'b', 'c'].map((p) => bus.transport(p));
  const got: string[] = [];
  const joins: string[] = [];
  for (const t of ts) {
    t.onMessage((_d, from) => (got.push(`${t.peer}<-${from}`), 'accept'));
    t.onPeerJoined((peer) => joins.push(`${t.peer}+${peer}`));
    await t.start();
  }
  await tick();
  joins.length = 0;
  bus.partition(['c']);
  await ts[0]?.publish(bytes('1'));
  await ts[2]?.publish(bytes('2'));
  await tick();
  assert.deepEqual(got, ['b<-a']);
  assert.equal(ts[2]?.stats().peers, 0);
  bus.heal();
  await tick();
  assert.deepEqual(joins.sort(), ['a+c', 'b+c', 'c+a', 'c+b']);
  await ts[2]?.publish(bytes('3'));
  await tick();
  assert.deepEqual(got.slice(1).sort(), ['a<-c', 'b<-c']);
});
