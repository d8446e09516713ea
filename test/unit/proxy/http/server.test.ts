import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import {
  ActiveRequests,
  Answering,
  createHttpServer,
  listen,
  mergeTables,
  TableBuilder,
  type EndpointTable,
  type Handler,
} from '#src/proxy/http/server.ts';

function serverWith(handler: Handler, onHandlerError: (error: unknown) => void): ReturnType<typeof createHttpServer> {
  const table: EndpointTable = new Map([['/x', new Map([['GET', handler]])]]);
  return createHttpServer({
    endpoints: { table },
    activeRequests: new ActiveRequests(),
    onHandlerError,
    requestTimeoutMs: 5_000,
    headersTimeoutMs: 5_000,
    keepAliveTimeoutMs: 1_000,
    maxHeaderBytes: 16_384,
  });
}

async function get(server: ReturnType<typeof createHttpServer>): Promise<number> {
  const address: AddressInfo = await listen(server, '127.0.0.1', 0);
  try {
    const answer = await fetch(`http://127.0.0.1:${address.port}/x`, { signal: AbortSignal.timeout(10_000) });
    await answer.arrayBuffer();
    return answer.status;
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

test('a handler that throws (or rejects) is logged once and answered 500', async () => {
  for (const handler of [
    () => {
      throw new Error('boom');
    },
    async () => {
      throw new Error('boom');
    },
  ] as Handler[]) {
    const seen: unknown[] = [];
    assert.equal(await get(serverWith(handler, (error) => seen.push(error))), 500);
    assert.equal(seen.length, 1);
    assert.equal((seen[0] as Error).message, 'boom');
  }
});

test('an error handler that throws too leaves no unhandled rejection, and the response is still cut', async () => {
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown): void => void rejections.push(reason);
  process.on('unhandledRejection', onRejection);
  try {
    const server = serverWith(
      (_req, res) => {
        res.writeHead(200);
        res.write('partial');
        throw new Error('after the head');
      },
      () => {
        throw new Error('the log is gone');
      },
    );
    const address: AddressInfo = await listen(server, '127.0.0.1', 0);
    try {
      // Cut, not left hanging until the client gives up (the bound only keeps a failure short).
      const ended = fetch(`http://127.0.0.1:${address.port}/x`, { signal: AbortSignal.timeout(5_000) }).then((answer) =>
        answer.arrayBuffer(),
      );
      await assert.rejects(ended, (error: Error) => error.name !== 'TimeoutError');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(rejections, []);
  } finally {
    process.off('unhandledRejection', onRejection);
  }
});

/** An Answering a test ends by hand (the inference spine ends its own as its steps settle). */
class ByHand extends Answering {
  fail(error: unknown): void {
    this.failed(error);
  }
  answer(): void {
    this.answered();
  }
}

test('a handler that answers through an Answering and fails, later or at once, is logged once and answered 500', async () => {
  for (const failAt of ['later', 'at once'] as const) {
    const seen: unknown[] = [];
    const handler: Handler = () => {
      const answering = new ByHand();
      if (failAt === 'at once') answering.fail(new Error('boom'));
      else setImmediate(() => answering.fail(new Error('boom')));
      return answering;
    };
    assert.equal(await get(serverWith(handler, (error) => seen.push(error))), 500, failAt);
    assert.equal(seen.length, 1);
    assert.equal((seen[0] as Error).message, 'boom');
  }
});

test('an Answering is awaited like a promise: it resolves when answered, rejects when failed, and ends once', async () => {
  const answered = new ByHand();
  const waiting = Promise.resolve(answered).then(() => 'answered');
  answered.answer();
  answered.fail(new Error('too late'));
  assert.equal(await waiting, 'answered');
  const failed = new ByHand();
  failed.fail(new Error('boom'));
  failed.answer();
  await assert.rejects(async () => await failed, /boom/);
  const told: unknown[] = [];
  failed.onFailure((error) => told.push(error));
  assert.equal(told.length, 1, 'a failure before anyone listened is told at once');
});

// ---- the endpoint table, and the requests being answered

const noop: Handler = () => {};
const other: Handler = () => {};

test('a table maps path, then method, to its handler', () => {
  const builder = new TableBuilder();
  builder.add('GET', '/a', noop);
  builder.add('POST', '/a', other);
  const table = builder.table();
  assert.deepEqual([...(table.get('/a')?.keys() ?? [])], ['GET', 'POST']);
  assert.equal(table.get('/a')?.get('POST'), other);
});

test("merged tables: a later table replaces an earlier one's path with all its methods", () => {
  const first = new TableBuilder();
  first.add('GET', '/health', noop);
  first.add('POST', '/health', noop);
  first.add('GET', '/v1/models', noop);
  const second = new TableBuilder();
  second.add('GET', '/health', other);
  const merged = mergeTables(first.table(), second.table());
  assert.deepEqual([...(merged.get('/health')?.entries() ?? [])], [['GET', other]]);
  assert.equal(merged.get('/v1/models')?.get('GET'), noop);
});

test('active requests count each response until it closes', () => {
  const active = new ActiveRequests();
  const a = new ServerResponse(new IncomingMessage(new Socket()));
  const b = new ServerResponse(new IncomingMessage(new Socket()));
  active.track(a);
  active.track(b);
  assert.equal(active.count(), 2);
  a.emit('close');
  assert.equal(active.count(), 1);
  b.emit('close');
  assert.equal(active.count(), 0);
});
