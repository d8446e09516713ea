// The c=1 stall figures (bench/loop-stalls.ts): requests counted by the main-thread CPU the probe saw,
// a 2 ms one charged to a scavenge only when the pause fell inside it, collector pauses per 10,000
// requests by kind, only what lies inside the measured window, and a cost every Nth request found
// by its request count.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readProbe, stallFigures, type GcPause, type ProbedRequest } from '../../../bench/loop-stalls.ts';

/** `n` requests 1 ms apart from t=1000, each 0.2 ms of CPU except the ones `cpu` names. */
function requests(n: number, cpu: Record<number, number> = {}): ProbedRequest[] {
  return Array.from({ length: n }, (_, i) => ({ at: 1000 + i, wallMs: 0.5, cpuMs: cpu[i] ?? 0.2 }));
}

test('requests over 1 and 2 ms of CPU, per 10,000, and the 2 ms ones a scavenge fell into', () => {
  const list = requests(1000, { 10: 1.5, 20: 2.5, 30: 3 });
  // A scavenge inside request 20; one between requests 29 and 30 (ends before 30 begins); a major collection.
  const gcs: GcPause[] = [
    { at: 1020.1, ms: 2, kind: 1 },
    { at: 1029.6, ms: 0.3, kind: 1 },
    { at: 1500, ms: 5, kind: 4 },
  ];
  const f = stallFigures(list, gcs, 0, 1e9, 100);
  assert.equal(f.requests, 1000);
  assert.equal(f.over1MsPer10k, 30);
  assert.equal(f.over2MsPer10k, 20);
  assert.equal(f.over2MsWithScavengePer10k, 10, 'only request 20 had a pause inside it');
  assert.equal(f.scavengesPer10k, 20);
  assert.equal(f.majorPer10k, 10);
  assert.equal(f.scavengeMaxMs, 2);
  assert.equal(f.majorMaxMs, 5);
  assert.equal(f.cpuP50Ms, 0.2);
  assert.equal(f.cpuMaxMs, 3);
});

test('only the requests and pauses inside the window count', () => {
  const list = requests(1000, { 5: 4 });
  const f = stallFigures(list, [{ at: 1005, ms: 3, kind: 1 }], 1100, 1999, 100);
  assert.equal(f.requests, 900);
  assert.equal(f.over2MsPer10k, 0);
  assert.equal(f.scavengesPer10k, 0);
});

test('a cost every Nth request is found by its residue, and a flat run shows none', () => {
  const cpu: Record<number, number> = {};
  for (let i = 37; i < 1000; i += 100) cpu[i] = 0.7;
  const periodic = stallFigures(requests(1000, cpu), [], 0, 1e9, 100).periodic;
  assert.equal(periodic.residue, 37);
  assert.ok(Math.abs(periodic.extraMs - 0.5) < 1e-9);
  assert.equal(stallFigures(requests(1000), [], 0, 1e9, 100).periodic.extraMs, 0);
});

test("the probe's lines, requests in arrival order", () => {
  const { requests: list, gcs } = readProbe('["r",2000,0.5,0.3]\n["gc",1500,1.2,1]\n["r",1000,0.4,0.2]\n');
  assert.deepEqual(
    list.map((r) => r.at),
    [1000, 2000],
  );
  assert.deepEqual(gcs, [{ at: 1500, ms: 1.2, kind: 1 }]);
});
