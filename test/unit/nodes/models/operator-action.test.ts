// An operator's load or unload over a fake manager and reconciler: the reconciler's judgement
// refuses (409 `warm`) or, with evict_warm, lets it through; the hold is taken before the operation
// is sent (no round in between can undo it), renewed when it is done, and dropped when it fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  actAsOperator,
  type ActOptions,
  type ModelActionOutcome,
  type OperatorActionDeps,
  type OperatorLoadJudgement,
} from '#src/nodes/index.ts';

const UNDONE: OperatorLoadJudgement = {
  stands: false,
  reclaim: { model: 'w', node: 'r', why: 'warm', evict: 'z' },
  reason: "loading 'z' on node 'r' would not stand",
};
const STANDS: OperatorLoadJudgement = { stands: true };

function rig(judged: OperatorLoadJudgement, result: 'done' | 'failed', storeLost = false) {
  const calls: string[] = [];
  const deps: OperatorActionDeps = {
    manager: {
      act: async (action, model, node, _origin, options: ActOptions = {}): Promise<ModelActionOutcome> => {
        const vetoed = options.vet?.({ node: node ?? 'r', evict: action === 'load' ? 'w' : undefined }, []);
        if (vetoed !== undefined) return { outcome: 'refused', action, model, node, code: vetoed.code, detail: vetoed.reason };
        calls.push(`sent ${action} ${model}`);
        return result === 'done'
          ? {
              outcome: 'done',
              action,
              model,
              node: node ?? 'r',
              detail: `${action}ed`,
              ...(action === 'load' ? { evicted: 'w' } : {}),
            }
          : { outcome: 'failed', action, model, node: node ?? 'r', detail: 'the node refused', retryAfterMs: 5000 };
      },
    },
    reconciler: {
      judgeLoad: () => judged,
      judgeUnload: () => judged,
      hold: (node, model, kind) => {
        calls.push(`hold ${kind} ${model} on ${node}`);
        return { node, model, kind, replica: null, sinceMs: 0, untilMs: 600_000 };
      },
      release: (node, model) => void calls.push(`release ${model} on ${node}`),
      holdsWritten: async () => void calls.push('written'),
      heldHereOnly: () => storeLost,
    },
    kept: (m) => m === 'w',
    now: () => Date.parse('2026-12-07T12:00:00.000Z'),
  };
  return { deps, calls };
}

test('a load the reconciler would undo is refused warm, nothing sent, nothing held', async () => {
  const { deps, calls } = rig(UNDONE, 'done');
  const outcome = await actAsOperator(deps, 'load', 'z', 'r');
  assert.equal(outcome.outcome, 'refused');
  assert.equal(outcome.outcome === 'refused' && outcome.code, 'warm');
  assert.deepEqual(calls, []);
});

test('with evict_warm it is held before it is sent, and the answer says until when and what is not restored', async () => {
  const { deps, calls } = rig(UNDONE, 'done');
  const outcome = await actAsOperator(deps, 'load', 'z', 'r', { evictWarm: true });
  assert.deepEqual(calls, ['hold loaded z on r', 'sent load z', 'hold loaded z on r', 'written']);
  assert.equal(outcome.outcome, 'done');
  assert.equal(outcome.outcome === 'done' && outcome.heldUntil, '2026-12-07T12:10:00.000Z');
  assert.match(outcome.detail, /does not unload it to load warm 'w' there \("evict_warm"\)/);
});

test('a load that stands holds too; one that fails drops its hold', async () => {
  const stands = rig(STANDS, 'done');
  assert.equal((await actAsOperator(stands.deps, 'load', 'z', 'r')).outcome, 'done');
  assert.deepEqual(stands.calls, ['hold loaded z on r', 'sent load z', 'hold loaded z on r', 'written']);
  const fails = rig(UNDONE, 'failed');
  assert.equal((await actAsOperator(fails.deps, 'load', 'z', 'r', { evictWarm: true })).outcome, 'failed');
  assert.deepEqual(fails.calls, ['hold loaded z on r', 'sent load z', 'release z on r', 'written']);
});

test('an unload: refused when undone; with evict_warm held off; one that stands only ends the hold', async () => {
  const refused = rig(UNDONE, 'done');
  assert.equal((await actAsOperator(refused.deps, 'unload', 'w', 'r')).outcome, 'refused');
  const overridden = rig(UNDONE, 'done');
  const held = await actAsOperator(overridden.deps, 'unload', 'w', 'r', { evictWarm: true });
  assert.deepEqual(overridden.calls, ['hold unloaded w on r', 'sent unload w', 'hold unloaded w on r', 'written']);
  assert.match(held.detail, /held off there by the operator until 2026-12-07T12:10:00.000Z/);
  const plain = rig(STANDS, 'done');
  assert.equal((await actAsOperator(plain.deps, 'unload', 'z', 'r')).outcome, 'done');
  assert.deepEqual(plain.calls, ['sent unload z', 'release z on r', 'written']);
});

test('the answer waits for the hold to be written, and says so when only this replica keeps it (the store is lost)', async () => {
  const lost = rig(UNDONE, 'done', true);
  const outcome = await actAsOperator(lost.deps, 'load', 'z', 'r', { evictWarm: true });
  assert.equal(lost.calls.at(-1), 'written');
  assert.match(outcome.detail, /kept by this replica only for now: the cluster store did not take it/);
  const kept = await actAsOperator(rig(UNDONE, 'done').deps, 'load', 'z', 'r', { evictWarm: true });
  assert.doesNotMatch(kept.detail, /this replica only/);
});
