// Pure: when this site publishes, and what. The full record at start, at once whenever its model
// set or url changes, when a peer joins, and on a want (at most one want-caused full record per
// heartbeat: a later want in the same heartbeat turns the next heartbeat into a full record).
// Otherwise one digest record per heartbeat: the steady-state cost stays one small message per
// site per heartbeat however many models it serves.

import { sameModels } from './site-models.ts';
import type { SiteRecordModel } from './site-record.ts';

export type PublishTrigger = 'heartbeat' | 'check' | 'peer_joined' | 'want';

export interface PublisherState {
  /** What the last full record said; undefined before the first. */
  readonly lastFull: { readonly models: readonly SiteRecordModel[]; readonly url: string } | undefined;
  /** Monotonic ms of the last want-caused full record. */
  readonly lastWantFullAt: number | undefined;
  /** A want arrived while rate-limited: the next heartbeat is a full record. */
  readonly wantPending: boolean;
}

export const INITIAL_PUBLISHER: PublisherState = Object.freeze({
  lastFull: undefined,
  lastWantFullAt: undefined,
  wantPending: false,
});

export type PublishKind = 'full' | 'digest';

export interface PublishDecision {
  readonly publish: PublishKind | undefined;
  /** Why (for logs and tests): start, changed, peer_joined, want, want_pending, heartbeat, unchanged, want_limited. */
  readonly why: string;
  readonly next: PublisherState;
}

export interface PublishInput {
  readonly trigger: PublishTrigger;
  readonly models: readonly SiteRecordModel[];
  readonly url: string;
  /** Monotonic ms. */
  readonly now: number;
  readonly heartbeatMs: number;
}

export function decidePublication(state: PublisherState, input: PublishInput): PublishDecision {
  const full = (why: string, extra: Partial<PublisherState> = {}): PublishDecision => ({
    publish: 'full',
    why,
    next: { ...state, wantPending: false, ...extra, lastFull: { models: input.models, url: input.url } },
  });
  if (state.lastFull === undefined) return full('start');
  if (state.lastFull.url !== input.url || !sameModels(state.lastFull.models, input.models)) return full('changed');
  switch (input.trigger) {
    case 'peer_joined':
      return full('peer_joined');
    case 'want': {
      const limited = state.lastWantFullAt !== undefined && input.now - state.lastWantFullAt < input.heartbeatMs;
      if (limited) return { publish: undefined, why: 'want_limited', next: { ...state, wantPending: true } };
      return full('want', { lastWantFullAt: input.now });
    }
    case 'heartbeat':
      if (state.wantPending) return full('want_pending', { lastWantFullAt: input.now });
      return { publish: 'digest', why: 'heartbeat', next: state };
    case 'check':
      return { publish: undefined, why: 'unchanged', next: state };
  }
}
