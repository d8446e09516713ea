import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decidePublication, INITIAL_PUBLISHER, type PublishTrigger, type PublisherState } from '#src/mesh/publisher.ts';
import type { SiteRecordModel } from '#src/mesh/site-record.ts';

const M1: SiteRecordModel[] = [{ id: 'm1', ctx: 4096 }];
const M2: SiteRecordModel[] = [{ id: 'm1', ctx: 4096 }, { id: 'm2' }];
const URL_A = 'http://127.0.0.1:1';

interface Step {
  readonly trigger: PublishTrigger;
  readonly at: number;
  readonly models?: SiteRecordModel[];
  readonly url?: string;
  readonly want: string;
}

function run(steps: readonly Step[]): string[] {
  let state: PublisherState = INITIAL_PUBLISHER;
  return steps.map((s) => {
    const d = decidePublication(state, {
      trigger: s.trigger,
      models: s.models ?? M1,
      url: s.url ?? URL_A,
      now: s.at,
      heartbeatMs: 5_000,
    });
    state = d.next;
    return `${d.publish ?? '-'}:${d.why}`;
  });
}

test('publisher: full at start, on change at once, on a peer joining; a digest every heartbeat otherwise', () => {
  const steps: Step[] = [
    { trigger: 'heartbeat', at: 0, want: 'full:start' },
    { trigger: 'heartbeat', at: 5_000, want: 'digest:heartbeat' },
    { trigger: 'check', at: 6_000, want: '-:unchanged' },
    { trigger: 'check', at: 7_000, models: M2, want: 'full:changed' },
    { trigger: 'heartbeat', at: 10_000, models: M2, want: 'digest:heartbeat' },
    { trigger: 'peer_joined', at: 11_000, models: M2, want: 'full:peer_joined' },
    { trigger: 'check', at: 12_000, models: M2, url: 'http://127.0.0.1:2', want: 'full:changed' },
    { trigger: 'heartbeat', at: 15_000, models: M1, url: 'http://127.0.0.1:2', want: 'full:changed' },
  ];
  assert.deepEqual(
    run(steps),
    steps.map((s) => s.want),
  );
});

test('publisher: at most one want-caused full record per heartbeat; a limited want makes the next heartbeat full', () => {
  const steps: Step[] = [
    { trigger: 'heartbeat', at: 0, want: 'full:start' },
    { trigger: 'want', at: 1_000, want: 'full:want' },
    { trigger: 'want', at: 2_000, want: '-:want_limited' },
    { trigger: 'want', at: 3_000, want: '-:want_limited' },
    { trigger: 'heartbeat', at: 5_000, want: 'full:want_pending' },
    { trigger: 'heartbeat', at: 10_000, want: 'digest:heartbeat' },
    { trigger: 'want', at: 10_500, want: 'full:want' },
    { trigger: 'want', at: 12_000, want: '-:want_limited' },
    { trigger: 'heartbeat', at: 15_000, want: 'full:want_pending' },
    { trigger: 'heartbeat', at: 20_000, want: 'digest:heartbeat' },
  ];
  assert.deepEqual(
    run(steps),
    steps.map((s) => s.want),
  );
});

test('publisher: a model change is never held back by the want limit', () => {
  const steps: Step[] = [
    { trigger: 'heartbeat', at: 0, want: 'full:start' },
    { trigger: 'want', at: 100, want: 'full:want' },
    { trigger: 'want', at: 200, models: M2, want: 'full:changed' },
  ];
  assert.deepEqual(
    run(steps),
    steps.map((s) => s.want),
  );
});
