// How the runner sends a line: through this gateway's own request plane, as one request on its
// public listener to the batch line route (batch-routes.ts), signed with this process's secret and
// naming its job and line — the route serves it as the job's tenant at the `batch` class, through
// the whole request path (scope, limits, budget, usage, routing, the request log, which shows it
// under the request id `<batch id>-<line>`), routed with its job's id as its session (affinity by
// job: JOB_SESSION_HEADER). Bounded in time (the gateway's request timeout and a
// margin) and in the answer's bytes ([batch] max_answer_bytes).

import { Agent } from '#src/core/undici-parts.ts';
import { boundedExchange, type ExchangeDispatcher } from '#src/core/bounded-exchange.ts';
import type { BatchRow, LineRow } from './batch-rows.ts';
import type { SentLine } from './batch-runner.ts';

export const LINE_PATH = '/_switchyard/batch-line';
export const SECRET_HEADER = 'x-switchyard-batch-secret';
export const JOB_HEADER = 'x-switchyard-batch';
export const LINE_HEADER = 'x-switchyard-batch-line';
/**
 * Affinity by job: the job's id as the lines' session, in a session header the routing reads
 * without configuration (proxy/request/affinity-key.ts). The routing's session layer
 * (routing/policies/sessions.ts) keeps a session's requests on its node — and its KV cache, with
 * the prompt prefixes the lines share — while that node is under its bounded load and has room,
 * and moves it on when it is not. A line's own `prompt_cache_key` (read first) still routes it.
 */
export const JOB_SESSION_HEADER = 'x-session-affinity';

/** Beyond the gateway's own request timeout, how long a line waits for its answer. */
const MARGIN_MS = 30_000;

export interface LineSenderDeps {
  /** The public listener's URL (set once it listens). */
  readonly origin: () => string | undefined;
  readonly secret: string;
  readonly requestTimeoutMs: () => number;
  readonly maxAnswerBytes: () => number;
}

export interface LineSender {
  send(job: BatchRow, line: LineRow): Promise<SentLine>;
  /** Ends every line still in flight (each comes to `failed`: no answer) and closes the connections. */
  close(): Promise<void>;
}

export function lineSender(deps: LineSenderDeps): LineSender {
  const agent = new Agent({ connections: 256, keepAliveTimeout: 10_000 });
  return {
    async send(job, line) {
      const origin = deps.origin();
      if (origin === undefined) return { kind: 'failed', error: 'the gateway does not listen yet' };
      const requestId = `${job.id}-${line.lineNo}`;
      const timeout = deps.requestTimeoutMs() + MARGIN_MS;
      const outcome = await boundedExchange(
        agent as unknown as ExchangeDispatcher,
        {
          origin,
          path: `${LINE_PATH}${job.endpoint}`,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            [SECRET_HEADER]: deps.secret,
            [JOB_HEADER]: job.id,
            [LINE_HEADER]: String(line.lineNo),
            [JOB_SESSION_HEADER]: job.id,
            'x-request-id': requestId,
          },
          body: line.body,
          headersTimeout: timeout,
          bodyTimeout: timeout,
        },
        { maxBytes: deps.maxAnswerBytes(), signal: AbortSignal.timeout(timeout) },
      );
      if (outcome.kind === 'answer')
        return {
          kind: 'answer',
          status: outcome.status,
          headers: outcome.headers,
          body: outcome.bytes.toString('utf8'),
          requestId,
        };
      if (outcome.kind === 'too-large') return { kind: 'too-large', limit: outcome.limit };
      return { kind: 'failed', error: outcome.error.message };
    },
    close: () => agent.destroy(),
  };
}
