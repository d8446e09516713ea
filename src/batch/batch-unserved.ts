// Where the Files and Batch API is not served, and what its routes answer there (pure over the
// config): without [server] state_dir (it names what to set), with [batch] enabled = false; and
// before the feature has started (its file open, its runner running). With [server] workers > 1
// every worker serves it (batch-crossing.ts).

import { GatewayError } from '#src/core/errors.ts';
import type { GatewayConfig } from '#src/config/index.ts';
import type { BatchPort } from './batch-port.ts';
import { BATCH_DEFAULTS, batchSettings, BatchConfigProblem, type BatchSettings } from './batch-config.ts';

const unavailable = (why: string): GatewayError =>
  new GatewayError('GW_NO_AVAILABLE_NODE', why, {
    status: 503,
    openaiType: 'server_error',
    openaiCode: 'batch_unavailable',
    final: true,
  });

/** Why the API is not served on this gateway; undefined = it is. */
export function notServed(config: GatewayConfig, settings: BatchSettings): GatewayError | undefined {
  if (config.server.stateDir === undefined)
    return unavailable(
      'The Files and Batch API keeps its files and jobs in [server] state_dir, which is not set: set it (e.g. state_dir = "/var/lib/switchyard") and restart the gateway.',
    );
  if (!settings.enabled) return unavailable('The Files and Batch API is turned off on this gateway ([batch] enabled = false).');
  return undefined;
}

/** Before the feature has started (or where it could not open its file): try again shortly. */
export const notStarted = (why = 'The Files and Batch API has not started yet; try again shortly.'): GatewayError =>
  new GatewayError('GW_NO_AVAILABLE_NODE', why, {
    status: 503,
    openaiType: 'server_error',
    openaiCode: 'batch_unavailable',
    retryAfterSeconds: 1,
  });

/** The port of a plane where no batch feature runs: every route answers why. */
export function unservedBatch(config: () => GatewayConfig): BatchPort {
  return {
    served: () => {
      const current = config();
      const settings = batchSettings(current.batch);
      return (
        notServed(current, settings instanceof BatchConfigProblem ? BATCH_DEFAULTS : settings) ??
        unavailable('The Files and Batch API is not served on this request plane.')
      );
    },
    job: () => undefined,
    secret: '',
  };
}
