// The HTTP shell of a sim node: a node:http server on loopback that records each request, answers
// the control endpoint, applies faults, and hands everything else to the node's kind. Closing it
// destroys every connection, so hung requests never outlive a test.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Clock } from '#src/core/clock.ts';
import { detach } from '#src/core/detach.ts';
import { parseRequestTarget } from '#src/core/request-target.ts';
import { answerControl, CONTROL_PREFIX, type ControlTarget } from '#src/sim/control-api.ts';
import type { KindHandler, SimExchange } from '#src/sim/exchange.ts';
import { injectFault } from '#src/sim/fault-injection.ts';
import type { RequestRecorder } from '#src/sim/recorder.ts';
import { textReply } from '#src/sim/reply.ts';
import { BodyTooLargeError, classifyBody, readRequestText, requestedModel } from '#src/sim/request-body.ts';
import { ResponseWriter } from '#src/sim/response-writer.ts';

export interface SimServerOptions {
  readonly host: string;
  readonly port: number;
  readonly clock: Clock;
  readonly recorder: RequestRecorder;
  readonly control: ControlTarget;
  readonly handler: KindHandler;
}

export interface SimServer {
  readonly port: number;
  close(): Promise<void>;
}

const PLAIN: Readonly<Record<string, string>> = { 'Content-Type': 'text/plain; charset=utf-8' };
const REQUEST_TIMEOUT_MS = 30_000;
const HEADERS_TIMEOUT_MS = 10_000;

async function serveRequest(req: IncomingMessage, res: ServerResponse, options: SimServerOptions): Promise<void> {
  const { clock, recorder, handler } = options;
  const target = parseRequestTarget(req.url);
  if (!target.ok) {
    req.resume();
    res.writeHead(400, { ...PLAIN, Connection: 'close' }).end(target.problem);
    return;
  }
  const url = target.url;
  const method = req.method ?? 'GET';
  const path = url.pathname;
  const query = Object.fromEntries(url.searchParams);
  let text: string;
  try {
    text = await readRequestText(req);
  } catch (error) {
    if (error instanceof BodyTooLargeError && !res.headersSent) {
      res.writeHead(413, { ...PLAIN, Connection: 'close' }).end(error.message);
    } else {
      res.destroy();
    }
    return;
  }
  const body = classifyBody(text);
  if (path.startsWith(CONTROL_PREFIX)) {
    new ResponseWriter(res, () => res.destroy()).reply(answerControl(method, path, body, options.control));
    return;
  }
  const model = requestedModel(body, query);
  const endpoint = handler.classify(method, path);
  const stream = endpoint === 'events';
  recorder.record({ method, path, query, ...(model === undefined ? {} : { model }), at: clock.now() }, stream);

  let destroyedOnPurpose = false;
  const aborted = new AbortController();
  res.on('close', () => {
    recorder.ended(
      stream ? 'stream' : res.writableFinished ? 'completed' : destroyedOnPurpose ? 'destroyed_by_fault' : 'client_aborted',
    );
    aborted.abort();
  });
  const destroySocket = (): void => {
    destroyedOnPurpose = true;
    res.destroy();
  };
  const writer = new ResponseWriter(res, destroySocket);
  const exchange: SimExchange = {
    method,
    path,
    query,
    headers: req.headers,
    body,
    writer,
    signal: aborted.signal,
    destroySocket,
  };
  try {
    if (await injectFault(exchange, endpoint, options.control.faults(), handler.faultReplies, clock)) return;
    await handler.handle(exchange);
  } catch (error) {
    if (writer.headersSent) destroySocket();
    else writer.reply(textReply(500, `sim node failure: ${String(error)}`, PLAIN));
  }
}

export async function startSimServer(options: SimServerOptions): Promise<SimServer> {
  // Reading a request is bounded in bytes (readRequestText) and in time (these two timeouts).
  const server = createServer({ requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: HEADERS_TIMEOUT_MS }, (req, res) => {
    detach(serveRequest(req, res, options), (error) => {
      // serveRequest answers its own failures; one that escapes is a sim bug, not a reason to exit.
      process.stderr.write(`sim node: request failed: ${String(error)}\n`);
      if (!res.headersSent) res.writeHead(500, PLAIN).end('sim node failure');
      else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    options.recorder.connectionOpened();
    socket.on('close', () => options.recorder.connectionClosed());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('sim node is not listening on TCP');
  let closing: Promise<void> | undefined;
  return {
    port: address.port,
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        options.handler.close();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
