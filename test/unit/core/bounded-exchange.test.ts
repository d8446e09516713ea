import { test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import {
  boundedExchange,
  type ExchangeDispatcher,
  type ExchangeLimits,
  type ExchangeOutcome,
} from '#src/core/bounded-exchange.ts';
import { httpRequester } from '#src/cli/http-requester.ts';

// One suite for both dispatchers the exchange runs on: undici's (the gateway's polls) and the CLI's
// node:http one (`status`, `models`).
interface Host {
  readonly dispatcher: ExchangeDispatcher;
  close(): Promise<unknown>;
}
const HOSTS: ReadonlyArray<readonly [string, () => Host]> = [
  [
    'undici',
    () => {
      const agent = new Agent({ connections: 1, pipelining: 1 });
      return { dispatcher: agent, close: () => agent.destroy() };
    },
  ],
  ['node:http', () => ({ dispatcher: httpRequester(1000), close: async () => undefined })],
];

type Route = (req: IncomingMessage, res: ServerResponse) => void;

for (const [hostName, makeHost] of HOSTS) {
  const test = (name: string, body: () => Promise<void>): Promise<void> => nodeTest(`${hostName}: ${name}`, body);

  async function withServer(route: Route, run: (origin: string, agent: ExchangeDispatcher) => Promise<void>): Promise<void> {
    const server = createServer(route);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const host = makeHost();
    try {
      await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, host.dispatcher);
    } finally {
      await host.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  function get(agent: ExchangeDispatcher, origin: string, path: string, limits: ExchangeLimits): Promise<ExchangeOutcome> {
    return boundedExchange(agent, { origin, path, method: 'GET', headers: { accept: 'application/json' } }, limits);
  }

  test('a whole answer within its bound comes back with its status, headers and bytes', async () => {
    await withServer(
      (req, res) => res.writeHead(200, { 'x-path': req.url ?? '' }).end('{"data":[]}'),
      async (origin, agent) => {
        const outcome = await get(agent, origin, '/v1/models?x=1', { maxBytes: 100 });
        assert.equal(outcome.kind, 'answer');
        if (outcome.kind !== 'answer') return;
        assert.equal(outcome.status, 200);
        assert.equal(outcome.headers['x-path'], '/v1/models?x=1');
        assert.equal(outcome.bytes.toString(), '{"data":[]}');
      },
    );
  });

  test('a body read in several chunks is joined', async () => {
    await withServer(
      (_req, res) => {
        res.writeHead(200);
        res.write('a'.repeat(10));
        setTimeout(() => res.end('b'.repeat(10)), 20);
      },
      async (origin, agent) => {
        const outcome = await get(agent, origin, '/', { maxBytes: 20 });
        assert.equal(outcome.kind === 'answer' ? outcome.bytes.toString() : outcome.kind, 'a'.repeat(10) + 'b'.repeat(10));
      },
    );
  });

  test('a declared length past the bound is too large before any body is read', async () => {
    await withServer(
      (_req, res) => res.writeHead(200, { 'content-length': 1000 }).end('x'.repeat(1000)),
      async (origin, agent) => {
        assert.deepEqual(await get(agent, origin, '/', { maxBytes: 999 }), { kind: 'too-large', status: 200, limit: 999 });
      },
    );
  });

  test('a chunked body that grows past the bound is cut off and its connection closed', async () => {
    let closed = false;
    await withServer(
      (req, res) => {
        req.socket.on('close', () => (closed = true));
        res.writeHead(200);
        const timer = setInterval(() => res.write('x'.repeat(100)), 5);
        res.on('close', () => clearInterval(timer));
      },
      async (origin, agent) => {
        assert.deepEqual(await get(agent, origin, '/', { maxBytes: 250 }), { kind: 'too-large', status: 200, limit: 250 });
        await new Promise((resolve) => setTimeout(resolve, 50));
        assert.equal(closed, true);
      },
    );
  });

  test('a non-2xx answer is bounded by maxErrorBytes', async () => {
    await withServer(
      (_req, res) => res.writeHead(503).end('y'.repeat(50)),
      async (origin, agent) => {
        assert.deepEqual(await get(agent, origin, '/', { maxBytes: 1000, maxErrorBytes: 40 }), {
          kind: 'too-large',
          status: 503,
          limit: 40,
        });
        const within = await get(agent, origin, '/', { maxBytes: 1000, maxErrorBytes: 50 });
        assert.equal(within.kind === 'answer' ? `${within.status} ${within.bytes.length}` : within.kind, '503 50');
      },
    );
  });

  test('a discarded body is bounded but not kept', async () => {
    await withServer(
      (_req, res) => res.writeHead(200).end('z'.repeat(64)),
      async (origin, agent) => {
        const outcome = await get(agent, origin, '/', { maxBytes: 64, discard: true });
        assert.equal(outcome.kind === 'answer' ? `${outcome.status} ${outcome.bytes.length}` : outcome.kind, '200 0');
      },
    );
  });

  test('an aborted signal fails the exchange with its reason: before it is sent, and while it waits for the answer', async () => {
    await withServer(
      () => {},
      async (origin, agent) => {
        const reason = new Error('timed out after 30 ms');
        const early = await get(agent, origin, '/', { maxBytes: 10, signal: AbortSignal.abort(reason) });
        assert.deepEqual(early, { kind: 'failed', status: undefined, error: reason });
        const controller = new AbortController();
        setTimeout(() => controller.abort(reason), 30);
        const late = await get(agent, origin, '/', { maxBytes: 10, signal: controller.signal });
        assert.deepEqual(late, { kind: 'failed', status: undefined, error: reason });
      },
    );
  });

  test('a body that breaks off after the head fails with the head status', async () => {
    await withServer(
      (req, res) => {
        res.writeHead(200, { 'content-length': 100 });
        res.write('partial');
        setTimeout(() => req.socket.destroy(), 10);
      },
      async (origin, agent) => {
        const outcome = await get(agent, origin, '/', { maxBytes: 1000 });
        assert.equal(outcome.kind, 'failed');
        assert.equal(outcome.status, 200);
      },
    );
  });

  test('a refused connection fails without a status', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const host = makeHost();
    try {
      const outcome = await get(host.dispatcher, origin, '/', { maxBytes: 10 });
      assert.equal(outcome.kind, 'failed');
      assert.equal(outcome.status, undefined);
      assert.match(outcome.kind === 'failed' ? String((outcome.error as NodeJS.ErrnoException).code) : '', /ECONNREFUSED/);
    } finally {
      await host.close();
    }
  });
}
