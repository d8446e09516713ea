// One replay passed from a node to the client as it streams, on the dispatcher's handler API
// (undici's `dispatch`: the gateway loads no request API, src/core/undici-parts.ts): the head as the
// node sent it (its status and content type), each chunk written on as it comes with the node's
// connection paused while the client's socket is full, the end passed on; the node's connection is
// closed when the client leaves. A 200 is relayed whole; any other answer (an error's JSON) up to
// `errorMaxBytes`. Bounded in time by undici's own timers: the head, and each wait between bytes.

import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';

export interface RelayRequest {
  readonly origin: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly headTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly errorMaxBytes: number;
}

/** How a relay ended: `failed` only before any head reached the client (the caller answers it). */
export type RelayEnd =
  { readonly kind: 'relayed' } | { readonly kind: 'failed'; readonly error: Error } | { readonly kind: 'left' };

/** Sends the GET and relays its answer to `res`; `head` gives the client's headers for the node's status and headers. */
export function relayStream(
  dispatcher: Pick<Dispatcher, 'dispatch'>,
  request: RelayRequest,
  res: ServerResponse,
  head: (status: number, headers: IncomingHttpHeaders) => Record<string, string>,
): Promise<RelayEnd> {
  return new Promise((settle) => {
    let controller: Dispatcher.DispatchController | undefined;
    let headSent = false;
    let passing = true;
    let passed = 0;
    let done = false;
    const end = (how: RelayEnd): void => {
      if (done) return;
      done = true;
      res.off('close', left);
      settle(how);
    };
    const left = (): void => {
      if (res.writableFinished) return;
      controller?.abort(new Error('the client left'));
      end({ kind: 'left' });
    };
    res.once('close', left);
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(started) {
        controller = started;
        if (res.destroyed) started.abort(new Error('the client left'));
      },
      onResponseStart(_controller, status, headers) {
        passing = status === 200;
        headSent = true;
        res.writeHead(status, head(status, headers));
      },
      onResponseData(current, chunk) {
        passed += chunk.length;
        if (!passing && passed > request.errorMaxBytes) {
          current.abort(new Error(`an error answer over ${request.errorMaxBytes} bytes`));
          return;
        }
        if (!res.write(chunk)) {
          current.pause();
          res.once('drain', () => current.resume());
        }
      },
      onResponseEnd() {
        res.end();
        end({ kind: 'relayed' });
      },
      onResponseError(_controller, error) {
        if (done) return;
        if (!headSent) return end({ kind: 'failed', error });
        // The node's stream broke, stalled past the idle bound, or was cut: the client's is cut too.
        if (!passing) res.end();
        else res.destroy();
        end({ kind: 'relayed' });
      },
    };
    dispatcher.dispatch(
      {
        origin: request.origin,
        path: request.path,
        method: 'GET',
        headers: request.headers,
        headersTimeout: request.headTimeoutMs,
        bodyTimeout: request.idleTimeoutMs,
      },
      handler,
    );
  });
}
