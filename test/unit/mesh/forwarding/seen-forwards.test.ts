// The memory of used forward signatures: each (site, nonce) once while it could be accepted,
// forgotten after, checked without recording, split into one share per pinned site (a full share
// refuses only its own site's new signatures, never forgetting early), and nothing an earlier run
// could have accepted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { claimFor, SeenForwards, type ForwardClaim } from '#src/mesh/forwarding/index.ts';

const START = 1_800_000_000_000;
const SKEW = 30_000;
/** Created a skew after START: the first signatures a memory begun at START takes. */
const FIRST = START + SKEW;
const claim = (nonce: string, over: Partial<ForwardClaim> = {}): ForwardClaim => ({
  ...claimFor('a', nonce, FIRST, FIRST + SKEW, SKEW),
  ...over,
});

test('claims, table', () => {
  const cases: { name: string; steps: [ForwardClaim, number, string][] }[] = [
    { name: 'first use', steps: [[claim('n1'), FIRST, 'ok']] },
    {
      name: 'second use',
      steps: [
        [claim('n1'), FIRST, 'ok'],
        [claim('n1'), FIRST + 1, 'replayed'],
      ],
    },
    {
      name: 'same nonce, other site',
      steps: [
        [claim('n1'), FIRST, 'ok'],
        [claim('n1', { site: 'b' }), FIRST, 'ok'],
      ],
    },
    {
      name: 'again after it could no longer be accepted',
      steps: [
        [claim('n1'), FIRST, 'ok'],
        [claim('n1'), FIRST + SKEW + 1, 'ok'],
      ],
    },
    {
      name: 'acceptable before the memory began',
      steps: [[claim('n1', claimFor('a', 'n1', FIRST - 1_000, FIRST + SKEW, SKEW)), FIRST, 'replayed']],
    },
  ];
  for (const { name, steps } of cases) {
    const seen = new SeenForwards(START);
    for (const [c, now, expected] of steps) {
      const verdict = seen.claim(c, now);
      assert.equal(verdict.ok ? 'ok' : verdict.rejection, expected, name);
    }
  }
});

test('a hold keeps a second copy out while the first is in flight; a release lets it go, a claim uses it', () => {
  const seen = new SeenForwards(START);
  const code = (v: ReturnType<SeenForwards['hold']>): string => (v.ok ? 'ok' : v.rejection);
  assert.equal(code(seen.hold(claim('n1'), FIRST)), 'ok');
  const copy = seen.hold(claim('n1'), FIRST);
  assert.equal(code(copy), 'replayed');
  if (!copy.ok) assert.match(copy.detail, /is being used by another request now$/);
  assert.deepEqual(seen.remembered(), new Map(), 'held is not used');
  seen.release(claim('n1'));
  assert.equal(seen.size(), 0, 'released: nothing left');
  assert.equal(code(seen.hold(claim('n1'), FIRST)), 'ok', 'held again');
  assert.equal(code(seen.claim(claim('n1'), FIRST)), 'ok');
  seen.release(claim('n1'));
  const after = seen.hold(claim('n1'), FIRST);
  assert.equal(code(after), 'replayed', 'a release after the use changes nothing');
  if (!after.ok) assert.match(after.detail, /was already used$/);
  assert.deepEqual(seen.remembered(), new Map([['a', 1]]));
});

test("held signatures count in their site's share until released", () => {
  const seen = new SeenForwards(START, { capacity: 2 });
  assert.equal(seen.hold(claim('n1'), FIRST).ok, true);
  assert.equal(seen.hold(claim('n2'), FIRST).ok, true);
  const full = seen.hold(claim('n3'), FIRST);
  assert.equal(full.ok ? 'ok' : full.rejection, 'replay_memory_full');
  seen.release(claim('n1'));
  assert.equal(seen.hold(claim('n3'), FIRST).ok, true);
});

test('full share: a new signature is refused with a retry time; once entries expire there is room again', () => {
  const seen = new SeenForwards(START, { capacity: 2 });
  assert.equal(seen.claim(claim('n1', { untilMs: FIRST + 10_000 }), FIRST).ok, true);
  assert.equal(seen.claim(claim('n2', { untilMs: FIRST + 20_000 }), FIRST).ok, true);
  const full = seen.claim(claim('n3'), FIRST + 1_000);
  assert.equal(full.ok, false);
  if (!full.ok) {
    assert.equal(full.rejection, 'replay_memory_full');
    assert.equal(full.retryAfterSeconds, 9);
  }
  const replay = seen.claim(claim('n1', { untilMs: FIRST + 10_000 }), FIRST + 1_000);
  assert.equal(replay.ok ? 'ok' : replay.rejection, 'replayed', 'a replay is still a replay when full');
  assert.equal(seen.claim(claim('n3'), FIRST + 10_001).ok, true, 'n1 expired: room for n3');
  assert.equal(seen.size(), 2);
});

test('one share per pinned site: a site filling its own leaves the others their room', () => {
  const sites = { count: 4 };
  const seen = new SeenForwards(START, { capacity: 8, remoteSites: () => sites.count });
  for (let i = 0; i < 2; i++) assert.equal(seen.claim(claim(`a${i}`), FIRST).ok, true);
  const full = seen.claim(claim('a2'), FIRST);
  assert.equal(full.ok ? 'ok' : full.rejection, 'replay_memory_full', 'a: 8 / 4 sites = 2 each');
  if (!full.ok)
    assert.match(
      full.detail,
      /^site 'a' has 2 forwarded requests remembered for replay checks, its share of the 8 \(\[mesh\] max_remembered_forwards, split over 4 pinned sites\)/,
    );
  for (const site of ['b', 'c', 'd'])
    for (let i = 0; i < 2; i++) assert.equal(seen.claim(claim(`${site}${i}`, { site }), FIRST).ok, true, `${site}${i}`);
  assert.equal(seen.size(), 8);
  assert.equal(seen.size('a'), 2);
  sites.count = 2;
  assert.equal(seen.claim(claim('a2'), FIRST).ok, true, 'two sites pinned after a reload: 4 each');
});
