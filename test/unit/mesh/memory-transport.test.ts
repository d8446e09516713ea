import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryBus } from '#src/mesh/index.ts';

const tick = () => new Promise((resolve) => setImmediate(resolve));
const bytes = (t: string) => new TextEncoder().encode(t);

test('memory bus: delivers to every other started member, counts bytes, reports joins', async () => {
  const bus = new MemoryBus();
  const [a, b, c] = ['a', 'b', 'c'].map((p) => bus.transport(p)) as [
    ReturnType<MemoryBus['transport']>,
    ReturnType<MemoryBus['transport']>,
    ReturnType<MemoryBus['transport']>,
  ];
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

test('memory bus: a message goes on only when the judge accepts it; links and admission shape who hears whom', async () => {
  const bus = new MemoryBus();
  const [h, a, b] = ['h', 'a', 'b'].map((p) => bus.transport(p, `id-${p}`)) as [
    ReturnType<MemoryBus['transport']>,
    ReturnType<MemoryBus['transport']>,
    ReturnType<MemoryBus['transport']>,
  ];
  const got: string[] = [];
  // a is the relay: rejects junk, ignores stale, accepts the rest.
  a.onMessage((data, from) => {
    const text = new TextDecoder().decode(data);
    got.push(`a<-${from}:${text}`);
    return text.startsWith('junk') ? 'reject' : text.startsWith('stale') ? 'ignore' : 'accept';
  });
  b.onMessage((data, from) => (got.push(`b<-${from}:${new TextDecoder().decode(data)}`), 'accept'));
  h.onMessage(() => 'accept');
  bus.link(['h', 'a'], ['a', 'b']);
  for (const t of [h, a, b]) await t.start();
  await h.publish(bytes('junk'));
  await h.publish(bytes('stale'));
  await h.publish(bytes('good'));
  await tick();
  assert.deepEqual(
    got,
    ['a<-id-h:junk', 'a<-id-h:stale', 'a<-id-h:good', 'b<-id-h:good'],
    'b hears only what a accepted, named by its author',
  );
  assert.equal(b.stats().bytesReceived, 4);
  // b admits only a: h, linked to b now, is still not b's neighbour.
  got.length = 0;
  b.admit({ peers: new Set(['id-a']), maxMessagesPerSecond: 100 });
  bus.link(['h', 'a'], ['a', 'b'], ['h', 'b']);
  await h.publish(bytes('direct'));
  await tick();
  assert.deepEqual(got, ['a<-id-h:direct', 'b<-id-h:direct'], 'once, through a');
  assert.equal(bus.neighbours('h', 'b'), false);
});

test('memory bus: messages judged per neighbour per second are bounded', async () => {
  let now = 0;
  const bus = new MemoryBus({ now: () => now });
  const [h, a] = ['h', 'a'].map((p) => bus.transport(p)) as [
    ReturnType<MemoryBus['transport']>,
    ReturnType<MemoryBus['transport']>,
  ];
  let judged = 0;
  a.onMessage(() => ((judged += 1), 'accept'));
  a.admit({ peers: undefined, maxMessagesPerSecond: 5 });
  await h.start();
  await a.start();
  for (let i = 0; i < 20; i += 1) await h.publish(bytes(`m${i}`));
  await tick();
  assert.equal(judged, 5);
  now = 1_000;
  await h.publish(bytes('next second'));
  await tick();
  assert.equal(judged, 6);
});
