// The memory of accepted forward signatures: each (site, nonce) once while it could be accepted,
// forgotten after, bounded (full = refused, never forgotten early), and nothing signed before the
// memory began.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeenForwards, type ForwardClaim } from '#src/mesh/forwarding/index.ts';

const START = 1_800_000_000_000;
const claim = (nonce: string, over: Partial<ForwardClaim> = {}): ForwardClaim => ({ site: 'a', nonce, createdMs: START, untilMs: START + 30_000, ...over });

test('claims, table', () => {
  const cases: { name: string; steps: [ForwardClaim, number, string][] }[] = [
    { name: 'first use', steps: [[claim('n1'), START, 'ok']] },
    { name: 'second use', steps: [[claim('n1'), START, 'ok'], [claim('n1'), START + 1, 'replayed']] },
    { name: 'same nonce, other site', steps: [[claim('n1'), START, 'ok'], [claim('n1', { site: 'b' }), START, 'ok']] },
    { name: 'again after it could no longer be accepted', steps: [[claim('n1'), START, 'ok'], [claim('n1'), START + 31_000, 'ok']] },
    { name: 'signed before the memory began', steps: [[claim('n1', { createdMs: START - 5_000 }), START, 'replayed']] },
    { name: 'signed in the second the memory began', steps: [[claim('n1', { createdMs: START - (START % 1000) }), START, 'ok']] },
  ];
  for (const { name, steps } of cases) {
    const seen = new SeenForwards(START + 500);
    for (const [c, now, expected] of steps) {
      const verdict = seen.claim(c, now);
      assert.equal(verdict.ok ? 'ok' : verdict.rejection, expected, name);
    }
  }
});

test('full: a new signature is refused with a retry time; once entries expire there is room again', () => {
  const seen = new SeenForwards(START, 2);
  assert.equal(seen.claim(claim('n1', { untilMs: START + 10_000 }), START).ok, true);
  assert.equal(seen.claim(claim('n2', { untilMs: START + 20_000 }), START).ok, true);
  const full = seen.claim(claim('n3'), START + 1_000);
  assert.equal(full.ok, false);
  if (!full.ok) {
    assert.equal(full.rejection, 'replay_memory_full');
    assert.equal(full.retryAfterSeconds, 9);
  }
  const replay = seen.claim(claim('n1', { untilMs: START + 10_000 }), START + 1_000);
  assert.equal(replay.ok ? 'ok' : replay.rejection, 'replayed', 'a replay is still a replay when full');
  assert.equal(seen.claim(claim('n3'), START + 10_001).ok, true, 'n1 expired: room for n3');
  assert.equal(seen.size(), 2);
});
