// The bench's reference proxy ("bare"): the leanest proxy the gateway's own stack allows — one
// `node:http` server and one undici `Pool` with a `dispatch()` handler, on the same Node and the
// same undici as Switchyard. No routing, no parsing, no metrics, no logs: request head and body go
// to the upstream as they came (hop-by-hop headers dropped), the answer comes back chunk by chunk
// with backpressure. What Switchyard costs beyond this row is Switchyard's own.
// Run as its own process: `node bench/bare-proxy.ts UPSTREAM_URL` prints one JSON line
// `{"event":"bare proxy ready","url":...}` on stdout and serves until SIGTERM.

import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool, type Dispatcher } from 'undici';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'upgrade',
  'trailer',
  'host',
]);

function forwardHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  return out;
}

/** undici's v7+ handler, writing straight into the client's response. */
class RelayHandler implements Dispatcher.DispatchHandler {
  readonly #res: ServerResponse;
  #controller: Dispatcher.DispatchController | undefined;

  constructor(res: ServerResponse) {
    this.#res = res;
    res.on('drain', () => this.#controller?.resume());
    res.on('close', () => {
      if (!res.writableFinished) this.#controller?.abort(new Error('client left'));
    });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
  }

  onResponseStart(_controller: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders): void {
    const out: Record<string, string | string[]> = {};
    for (const name in headers) {
      const value = headers[name];
      if (value !== undefined && name !== 'connection' && name !== 'keep-alive' && name !== 'transfer-encoding')
        out[name] = value;
    }
    this.#res.writeHead(status, out);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.#res.write(chunk)) controller.pause();
  }

  onResponseEnd(): void {
    this.#res.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, _error: Error): void {
    if (!this.#res.headersSent) {
      this.#res.writeHead(502, { 'content-length': 0 });
      this.#res.end();
    } else this.#res.destroy();
  }
}

export interface RunningBareProxy {
  readonly url: string;
  close(): Promise<void>;
}

/** The bare proxy on 127.0.0.1 port 0 in front of `upstream`, in this process (bench/footprint.ts measures it there). */
export async function startBareProxy(upstream: string): Promise<RunningBareProxy> {
  const pool = new Pool(new URL(upstream).origin, { pipelining: 1, keepAliveTimeout: 30_000 });
  const server = createServer({ keepAliveTimeout: 120_000, requestTimeout: 0 }, (req: IncomingMessage, res: ServerResponse) => {
    const method = req.method ?? 'GET';
    const hasBody = method !== 'GET' && method !== 'HEAD';
    pool.dispatch(
      { path: req.url ?? '/', method, headers: forwardHeaders(req.headers), body: hasBody ? req : null },
      new RelayHandler(res),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await pool.close();
    },
  };
}

async function main(argv: readonly string[]): Promise<void> {
  const upstream = argv[0];
  if (upstream === undefined) throw new Error('usage: node bench/bare-proxy.ts UPSTREAM_URL');
  const bare = await startBareProxy(upstream);
  process.stdout.write(`${JSON.stringify({ event: 'bare proxy ready', url: bare.url })}\n`);
  const stop = (): void => void bare.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

if (import.meta.main) await main(process.argv.slice(2));
