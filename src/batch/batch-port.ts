// What the request plane's batch routes reach of the batch feature (in this thread: its port under
// BATCH_PORT, core/part-key.ts): the API (or why it is not served here), the job a line belongs
// to, and the secret that signs the runner's own line requests.

import { partKey } from '#src/core/part-key.ts';
import type { GatewayError } from '#src/core/errors.ts';
import type { BatchApi } from './batch-api.ts';

export interface BatchPort {
  /** The API, or the answer that says why it is not served (no [server] state_dir, [batch] enabled = false). */
  served(): BatchApi | GatewayError;
  /** The tenant and endpoint of a job (a line's request is served as its tenant). */
  job(id: string): { readonly tenant: string; readonly endpoint: string } | undefined;
  /** Signs the runner's line requests (random per process; compared in constant time). */
  readonly secret: string;
}

export const BATCH_PORT = partKey<BatchPort>('batch');
