import { test } from 'node:test';
import assert from 'node:assert/strict';
import { degradedAfter, initialHealthState, observeProbe, type HealthState, type ProbeOutcome } from '#src/nodes/index.ts';

const ok: ProbeOutcome = { ok: true, latencyMs: 1 };
const bad: ProbeOutcome = { ok: false, error: 'ECONNREFUSED' };

function run(outcomes: readonly ProbeOutcome[], failThreshold: number): HealthState[] {
  const states: HealthState[] = [];
  let state = initialHealthState(0);
  outcomes.forEach((o, i) => {
    state = observeProbe(state, o, { failThreshold }, i + 1);
    states.push(state);
  });
  return states;
}

test('consecutive failures move a node healthy → degraded at half the threshold → dead at the threshold', () => {
  const cases: { threshold: number; outcomes: ProbeOutcome[]; statuses: string[] }[] = [
    { threshold: 4, outcomes: [ok, bad, bad, bad, bad], statuses: ['healthy', 'healthy', 'degraded', 'degraded', 'dead'] },
    { threshold: 3, outcomes: [ok, bad, bad, bad], statuses: ['healthy', 'degraded', 'degraded', 'dead'] },
    { threshold: 1, outcomes: [ok, bad], statuses: ['healthy', 'dead'] },
    { threshold: 2, outcomes: [bad, bad], statuses: ['degraded', 'dead'] },
  ];
  for (const c of cases) {
    assert.deepEqual(
      run(c.outcomes, c.threshold).map((s) => s.status),
      c.statuses,
      `threshold ${c.threshold}`,
    );
  }
});

test('one success brings a dead node straight back to healthy and resets the failure count', () => {
  const states = run([bad, bad, bad, ok], 3);
  assert.equal(states[2]?.status, 'dead');
  assert.equal(states[3]?.status, 'healthy');
  assert.equal(states[3]?.fails, 0);
});

test('changedAt moves only when the status changes, and the last error is kept', () => {
  const states = run([ok, ok, bad, bad], 4);
  assert.equal(states[1]?.changedAt, 1);
  assert.equal(states[2]?.changedAt, 1);
  assert.equal(states[3]?.changedAt, 4);
  assert.equal(states[3]?.lastError, 'ECONNREFUSED');
});

test('degraded starts after at least one failure even for tiny thresholds', () => {
  assert.equal(degradedAfter({ failThreshold: 1 }), 1);
  assert.equal(degradedAfter({ failThreshold: 6 }), 3);
});
