// `node bench/workers-roundtrip.ts`: what one admit/release message round trip costs between the
// lease owner and a request worker, for the two ways `[server] workers` could run: worker_threads
// (MessagePort) and node:cluster (child-process IPC, what cluster workers talk over). Sequential
// round trips give the added latency per request; 64 outstanding give the owner's throughput.
// Prints one JSON line: { event: 'workers round trip', results: { threads: {...}, processes: {...} } }.

import { fork, type ChildProcess } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';

export interface RoundTripFigures {
  readonly sequentialP50Us: number;
  readonly sequentialP99Us: number;
  readonly pipelinedPerSecond: number;
}

interface Peer {
  send(message: unknown): void;
  onMessage(listener: (message: unknown) => void): void;
  close(): Promise<void>;
}

const SEQUENTIAL = 20_000;
const PIPELINED = 100_000;
const OUTSTANDING = 64;
// The shape of a real admit answer: a node name, a lease id, the route reason.
const ANSWER = {
  t: 'admitted',
  id: 0,
  node: 'node-17',
  route: { policy: 'least-in-flight', reason: 'fewest in flight (3)' },
  waitedMs: 0,
};

function echoScript(): string {
  return (
    'const send = (m) => { const a = { ...m.answer, id: m.id }; if (globalThis.port) port.postMessage(a); else process.send(a); };' +
    'const wt = await import("node:worker_threads");' +
    'if (wt.parentPort) { globalThis.port = wt.parentPort; wt.parentPort.on("message", send); } else process.on("message", send);'
  );
}

function threadPeer(): Peer {
  const worker = new Worker(echoScript(), { eval: true, type: 'module' } as never);
  return {
    send: (m) => worker.postMessage(m),
    onMessage: (l) => void worker.on('message', l),
    close: async () => void (await worker.terminate()),
  };
}

function processPeer(): Peer {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--echo'], { serialization: 'advanced', stdio: 'inherit' });
  return {
    send: (m) => void child.send(m as never),
    onMessage: (l) => void child.on('message', l),
    close: async () => {
      child.kill();
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

async function measure(peer: Peer): Promise<RoundTripFigures> {
  const waiting = new Map<number, () => void>();
  peer.onMessage((m) => {
    const id = (m as { id: number }).id;
    waiting.get(id)?.();
    waiting.delete(id);
  });
  let next = 0;
  const roundTrip = (): Promise<void> =>
    new Promise((resolve) => {
      next += 1;
      waiting.set(next, resolve);
      peer.send({
        t: 'admit',
        id: next,
        answer: ANSWER,
        req: { model: 'm', promptTokens: 100, maxTokens: 16, triedNodes: new Set<string>() },
      });
    });
  for (let i = 0; i < 2_000; i += 1) await roundTrip();
  const times: number[] = [];
  for (let i = 0; i < SEQUENTIAL; i += 1) {
    const start = process.hrtime.bigint();
    await roundTrip();
    times.push(Number(process.hrtime.bigint() - start) / 1_000);
  }
  times.sort((a, b) => a - b);
  const started = performance.now();
  let sent = 0;
  const lane = async (): Promise<void> => {
    while (sent < PIPELINED) {
      sent += 1;
      await roundTrip();
    }
  };
  await Promise.all(Array.from({ length: OUTSTANDING }, lane));
  const seconds = (performance.now() - started) / 1_000;
  const at = (q: number): number => Math.round((times[Math.floor(q * (times.length - 1))] ?? 0) * 10) / 10;
  return { sequentialP50Us: at(0.5), sequentialP99Us: at(0.99), pipelinedPerSecond: Math.round(PIPELINED / seconds) };
}

async function main(): Promise<void> {
  if (process.argv.includes('--echo')) {
    await import(`data:text/javascript,${encodeURIComponent(echoScript())}`);
    return;
  }
  const result: Record<string, RoundTripFigures> = {};
  for (const [name, start] of [
    ['threads', threadPeer],
    ['processes', processPeer],
  ] as const) {
    const peer = start();
    result[name] = await measure(peer);
    await peer.close();
  }
  process.stdout.write(`${JSON.stringify({ event: 'workers round trip', results: result })}\n`);
}

await main();
