// The workers projection (bench/workers-projection.ts): the model's three bounds, the fewest request
// threads that reach the lower of the owner's and the host's, the one-thread gateway beside it, and
// what the cell says bounded it (a full machine is the run queue, not a wait).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  boundHere,
  inputsOf,
  projectWorkers,
  roleOf,
  type ProjectionInputs,
  type WorkersCell,
} from '../../../bench/workers-projection.ts';

const INPUTS: ProjectionInputs = {
  ownerUs: 20,
  workersUs: 150,
  helpersUs: 30,
  loadGeneratorUs: 20,
  upstreamUs: 30,
  single: { mainUs: 120, processUs: 140 },
};

test('each core count: the host CPU first, the owner thread at many cores, never fewer than 2 request threads', () => {
  const rows = projectWorkers(INPUTS, [2, 4, 8, 16, 64]);
  const by = (cores: number) => rows.find((r) => r.cores === cores);
  // 2 cores: 2e6 / (20 + 150 + 30 + 20 + 30) = 8,000 req/s; 2 threads could do 13,333.
  assert.deepEqual([by(2)?.workers, Math.round(by(2)?.requestsPerSecond ?? 0), by(2)?.bound], [2, 8000, 'host CPU']);
  // 8 cores: the host allows 32,000 but the owner 50,000: 5 threads (33,333) reach the host's bound.
  assert.deepEqual([by(8)?.workers, Math.round(by(8)?.requestsPerSecond ?? 0), by(8)?.bound], [5, 32000, 'host CPU']);
  // 16 cores: the host allows 64,000, the owner 50,000: the owner caps, 8 threads reach it.
  assert.deepEqual([by(16)?.workers, Math.round(by(16)?.requestsPerSecond ?? 0), by(16)?.bound], [8, 50000, 'owner thread']);
  // Alone on 2 cores (no load generator, no upstream): 2e6 / 200 = 10,000.
  assert.equal(Math.round(by(2)?.aloneRequestsPerSecond ?? 0), 10000);
  // workers = 1: one loop at 120 µs caps at 8,333 whatever the cores (2 cores would allow 2e6 / 190 = 10,526).
  assert.equal(Math.round(by(64)?.singleRequestsPerSecond ?? 0), 8333);
  assert.equal(Math.round(by(2)?.singleRequestsPerSecond ?? 0), 8333);
  const tight = projectWorkers({ ...INPUTS, single: { mainUs: 120, processUs: 400 } }, [2])[0];
  assert.equal(Math.round(tight?.singleRequestsPerSecond ?? 0), 4444, 'the host: 2e6 / (400 + 20 + 30)');
});

test("threads are told apart by name: the process's first is the owner, the request threads by their name", () => {
  assert.equal(roleOf('MainThread', true), 'owner');
  assert.equal(roleOf('switchyard-work', false), 'workers');
  assert.equal(roleOf('V8Worker', false), 'v8 helpers');
  assert.equal(roleOf('libuv-worker', false), 'other');
});

const cell = (over: Partial<WorkersCell>): WorkersCell => ({
  workers: 2,
  requestsPerSecond: 1000,
  roles: [
    { role: 'owner', threads: 1, usPerRequest: 40, corePercent: 4, runQueueWaitPercent: 40 },
    { role: 'workers', threads: 2, usPerRequest: 200, corePercent: 20, runQueueWaitPercent: 60 },
    { role: 'v8 helpers', threads: 4, usPerRequest: 60, corePercent: 6, runQueueWaitPercent: 20 },
  ],
  gatewayUsPerRequest: 300,
  gatewayCorePercent: 30,
  loadGeneratorUsPerRequest: 20,
  upstreamUsPerRequest: 80,
  otherLoadPercent: 0,
  ...over,
});

test('what bounded the cell: a full machine, a full owner, or neither (a wait)', () => {
  assert.match(boundHere(cell({ otherLoadPercent: 165 }), 2), /^host CPU/);
  assert.match(boundHere(cell({}), 2), /^neither the cores nor the owner are full/);
  const fullOwner = cell({ roles: [{ role: 'owner', threads: 1, usPerRequest: 40, corePercent: 95, runQueueWaitPercent: 1 }] });
  assert.match(boundHere(fullOwner, 8), /^the owner thread/);
});

test('the inputs come from the workers cell, the one-thread figures from the workers = 1 cell', () => {
  const one = cell({
    workers: 1,
    roles: [{ role: 'owner', threads: 1, usPerRequest: 130, corePercent: 90, runQueueWaitPercent: 5 }],
    gatewayUsPerRequest: 150,
  });
  assert.deepEqual(inputsOf(cell({}), one), {
    ownerUs: 40,
    workersUs: 200,
    helpersUs: 60,
    loadGeneratorUs: 20,
    upstreamUs: 80,
    single: { mainUs: 130, processUs: 150 },
  });
});
