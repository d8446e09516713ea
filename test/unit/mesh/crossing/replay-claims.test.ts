// A worker's replay guard asks the owner and takes its answer; an owner that does not answer in
// time refuses the forward (fail closed), and a late answer is dropped.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '#src/core/clock.ts';
import { CLAIM_TIMEOUT_MS, OwnerReplayGuard } from '#src/mesh/crossing/replay-claims.ts';
import type { MeshWorkerMessage } from '#src/mesh/crossing/index.ts';

const CLAIM = { site: 'a', nonce: 'n'.repeat(22), createdMs: 1_000, fromMs: -29_000, untilMs: 31_000 };

test('the owner answers each hold and claim by id; a release is told', async () => {
  const sent: MeshWorkerMessage[] = [];
  const guard = new OwnerReplayGuard((m) => sent.push(m), new ManualClock());
  const first = guard.claim(CLAIM);
  const second = guard.hold({ ...CLAIM, nonce: 'm'.repeat(22) });
  guard.release({ ...CLAIM, nonce: 'r'.repeat(22) });
  assert.deepEqual(
    sent.map((m) => (m.t === 'claim' ? [m.id, m.claim.nonce[0], m.op] : m.t)),
    [
      [1, 'n', 'claim'],
      [2, 'm', 'hold'],
      [3, 'r', 'release'],
    ],
  );
  guard.answered(3, { ok: true });
  guard.answered(2, { ok: false, rejection: 'replayed', detail: 'seen' });
  guard.answered(1, { ok: true });
  assert.deepEqual(await first, { ok: true });
  assert.equal((await second).ok, false);
  assert.equal(guard.pending(), 0);
});

test('no answer in time: refused, retry later; a late answer changes nothing', async () => {
  const clock = new ManualClock();
  const guard = new OwnerReplayGuard(() => {}, clock);
  const verdict = guard.claim(CLAIM);
  clock.advance(CLAIM_TIMEOUT_MS);
  const result = await verdict;
  assert.equal(result.ok, false);
  if (!result.ok) assert.equal(result.rejection, 'replay_unavailable');
  guard.answered(1, { ok: true });
  assert.equal(guard.pending(), 0);
});
