// A request to an inference endpoint refused before the inference handler (a 401 for a missing or
// unknown key): answered like any refusal, with its request id, and reported once as it ends
// (`proxy:request-finished`), so the request log and the Requests view show it as well.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayError } from '#src/core/errors.ts';
import type { InferenceEndpoint } from '#src/config/index.ts';
import { sendError } from '../http/openai-error.ts';
import { errorDialectFor } from '../http/error-dialect.ts';
import { requestIdFor, startRequestReport } from '../request/request-report.ts';
import type { InferenceDeps } from './inference-deps.ts';

export function refuseBeforeInference(
  deps: Pick<InferenceDeps, 'clock' | 'events' | 'modelLabel' | 'newRequestId'>,
  endpoint: InferenceEndpoint,
  req: IncomingMessage,
  res: ServerResponse,
  error: GatewayError,
): void {
  const report = startRequestReport(deps, endpoint, deps.clock.monotonicMs(), req.socket);
  report.requestId = requestIdFor(req.headers['x-request-id'], deps.newRequestId);
  report.refusal = error.code;
  sendError(res, error, { 'x-request-id': report.requestId }, errorDialectFor(endpoint));
  report.finish(undefined, error.status);
}
