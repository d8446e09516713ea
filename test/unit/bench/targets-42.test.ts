// Issue 42's target rows judge the side-by-side figures against the bare proxy and the Node peer in
// the same run: met / missed by the ratios, n/a where the bare proxy's own figure is noise (negative)
// or the machine is not quiet enough for the 1 ms bound, and n/a naming what was not measured.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { issue42Checks } from '../../../bench/targets-42.ts';
import type { SideBySideResult } from '../../../bench/side-by-side.ts';
import type { TargetName } from '../../../bench/proxy-bench.ts';
import type { FootprintResult, FootprintRow } from '../../../bench/footprint-report.ts';
import type { FootprintTarget } from '../../../bench/footprint.ts';
import { PROJECTED_CORES, projectWorkers } from '../../../bench/workers-projection.ts';

const added = (target: TargetName, concurrency: number, p50Ms: number, p99Ms: number) => ({
  workload: 'json',
  concurrency,
  target,
  p50Ms,
  p99Ms,
});

function side(rows: ReturnType<typeof added>[], concurrencies = [1]): SideBySideResult {
  return { delayMs: 22, concurrencies, rows: [], added: rows, missing: [] };
}

const find = (sideBySide: SideBySideResult, goal: string) => {
  const check = issue42Checks({ proxy: [], sideBySide, control: undefined, lean: undefined }).find((c) => c.goal.includes(goal));
  assert.ok(check !== undefined, `no check "${goal}"`);
  return check;
};

test('added p50 and p99 against 1.25 × the bare proxy, in the same cell', () => {
  const run = side([added('switchyard', 1, 0.5, 1.2), added('bare', 1, 0.4, 1.0)]);
  assert.equal(find(run, "c=1: Switchyard's added p50").met, true);
  assert.equal(find(run, "c=1: Switchyard's added p99").met, true);
  const worse = side([added('switchyard', 1, 0.6, 1.3), added('bare', 1, 0.4, 1.0)]);
  assert.equal(find(worse, "c=1: Switchyard's added p50").met, false);
  assert.equal(find(worse, "c=1: Switchyard's added p99").met, false);
});

test('a negative bare figure is noise: the ratio is not judged, and neither is the 1 ms bound', () => {
  const run = side([added('switchyard', 4, 0.5, -3), added('bare', 4, 0.4, -2)], [4]);
  assert.equal(find(run, "c=4: Switchyard's added p99").met, undefined);
  assert.match(find(run, "c=4: Switchyard's added p99").measured, /noise/);
  assert.equal(find(run, 'c=4: added p99 ≤ 1 ms').met, undefined);
});

test('the 1 ms bound is judged only where the bare proxy adds ≤ 0.5 ms, and only up to c=16', () => {
  const quiet = side([added('switchyard', 16, 0.3, 0.9), added('bare', 16, 0.2, 0.4)], [16]);
  assert.equal(find(quiet, 'c=16: added p99 ≤ 1 ms').met, true);
  const over = side([added('switchyard', 16, 0.3, 1.1), added('bare', 16, 0.2, 0.4)], [16]);
  assert.equal(find(over, 'c=16: added p99 ≤ 1 ms').met, false);
  const busy = side([added('switchyard', 16, 0.3, 0.9), added('bare', 16, 0.2, 0.6)], [16]);
  assert.equal(find(busy, 'c=16: added p99 ≤ 1 ms').met, undefined);
  const c64 = issue42Checks({ proxy: [], sideBySide: side([], [64]), control: undefined, lean: undefined });
  assert.ok(!c64.some((c) => c.goal.includes('c=64: added p99 ≤ 1 ms')));
});

test('below the Node peer: both figures, or n/a when it was not measured', () => {
  const below = side([added('switchyard', 1, 0.5, 1), added('bare', 1, 0.4, 1), added('portkey', 1, 3, 6)]);
  assert.equal(find(below, 'below portkey').met, true);
  const notBelow = side([added('switchyard', 1, 0.5, 7), added('bare', 1, 0.4, 1), added('portkey', 1, 3, 6)]);
  assert.equal(find(notBelow, 'below portkey').met, false);
  const absent = side([added('switchyard', 1, 0.5, 1), added('bare', 1, 0.4, 1)]);
  assert.equal(find(absent, 'below portkey').met, undefined);
  assert.match(find(absent, 'below portkey').measured, /install-peers/);
});

test('not measured: every row says n/a with what would measure it', () => {
  const checks = issue42Checks({ proxy: [], sideBySide: undefined, control: undefined, lean: undefined });
  assert.ok(checks.length > 0);
  for (const c of checks) assert.equal(c.met, undefined, c.goal);
  assert.ok(checks.some((c) => c.measured.includes('--only side')));
});

test('the workers row: n/a naming what measures it, or what bounded the cell and the model at 2 and 16 cores', () => {
  const goal = '#42 workers';
  const none = issue42Checks({ proxy: [], sideBySide: undefined, control: undefined, lean: undefined }).find((c) =>
    c.goal.startsWith(goal),
  );
  assert.match(none?.measured ?? '', /--workers 2/);
  const inputs = { ownerUs: 20, workersUs: 150, helpersUs: 30, loadGeneratorUs: 20, upstreamUs: 30, single: undefined };
  const workers = {
    cells: [],
    inputs,
    rows: projectWorkers(inputs, PROJECTED_CORES),
    boundHere: 'host CPU: every core busy — …',
  };
  const row = issue42Checks({ proxy: [], sideBySide: undefined, control: undefined, lean: undefined, workers }).find((c) =>
    c.goal.startsWith(goal),
  );
  assert.equal(row?.met, true);
  assert.match(row?.measured ?? '', /on 2 cores: host CPU: every core busy; µs\/req owner 20, request threads 150/);
  assert.match(row?.measured ?? '', /16 cores 50000 req\/s with 8 workers \(owner thread\)/);
});

test('the footprint line: n/a without the footprint run, "measured" with each feature row\'s extra when given', () => {
  const goal = '#42 footprint with tenants, tracing and a mesh';
  const base = { proxy: [], sideBySide: undefined, control: undefined, lean: undefined };
  const none = issue42Checks(base).find((c) => c.goal.startsWith(goal));
  assert.equal(none?.met, undefined);
  assert.match(none?.measured ?? '', /--only footprint/);
  const row = (label: string, target: FootprintTarget, files: number, promises: number): FootprintRow => ({
    label,
    target,
    workload: 'json',
    files,
    folders: 5,
    functions: files * 3,
    callsPerRequest: files * 4,
    promisesPerRequest: promises,
    kbPerRequest: files / 2,
    processKbPerRequest: files,
    occasionalFunctions: 0,
  });
  const footprint: FootprintResult = {
    requestsPerWindow: { coverage: 50, allocation: 256 },
    windows: 3,
    rows: [
      row('switchyard', 'gateway', 20, 0),
      row('switchyard + 1 limited tenant', 'tenant', 28, 4),
      row('switchyard + [tracing] sample_ratio 1', 'tracing', 26, 1),
      row('switchyard + [mesh], served locally', 'mesh', 21, 0),
    ],
    plainFilesByFolder: {},
    plainHeaviest: [],
    plainOccasional: [],
    plainFeatureFunctions: [],
  };
  const line = issue42Checks({ ...base, footprint }).find((c) => c.goal.startsWith(goal));
  assert.equal(line?.met, true);
  assert.match(line?.measured ?? '', /^measured/);
  assert.match(line?.measured ?? '', /1 limited tenant: \+8 files, \+24 functions, \+32 calls, \+4 promises, \+4 KB/);
  assert.match(line?.measured ?? '', /\[mesh\], served locally: \+1 files, \+3 functions, \+4 calls, \+0 promises, \+0\.5 KB/);
});
