// Pure: what an attempt that loads its model says about the load. Any answer head below 500 means
// the model is up; the load deadline passing means it did not load; anything else only ends it.

import type { LoadOutcome } from '#src/scheduler/index.ts';
import type { AttemptOutcome } from '../attempt/attempt-outcome.ts';

export function loadOutcomeOf(outcome: AttemptOutcome): LoadOutcome {
  if (outcome.kind === 'failed') {
    if (outcome.result === 'load_timeout') return 'timed_out';
    // An answer whose head came and then failed (no first token, a body that broke off): the model is up.
    return outcome.status !== undefined && outcome.status < 500 ? 'loaded' : 'failed';
  }
  return outcome.status !== undefined && outcome.status < 500 ? 'loaded' : 'failed';
}
