// The footprint's arithmetic over plain data (bench/footprint.ts, bench/footprint-report.ts): what
// ran in every window is the requests' work (fewest calls), what ran in some is occasional; own
// bytes are those under a frame of the proxy's code, charged to the innermost; the median window
// stands; the targets are judged on the plain JSON row and name the feature functions that ran.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allocationOf, coverageOf, type HeapNode, type ProbeContext, type ScriptCoverage } from '../../../bench/footprint.ts';
import {
  extraText,
  footprintChecks,
  footprintExtras,
  footprintExtrasCheck,
  renderFootprint,
  type FootprintResult,
  type FootprintRow,
} from '../../../bench/footprint-report.ts';

const CONTEXT: ProbeContext = {
  target: 'gateway',
  workload: 'json',
  requests: 10,
  windows: 2,
  owns: (path) => path.startsWith('/r/src/'),
  relativeTo: '/r',
  lineAt: (_path, offset) => offset + 1,
};

const script = (url: string, fns: [string, number, number][]): ScriptCoverage => ({
  url,
  functions: fns.map(([functionName, startOffset, count]) => ({ functionName, ranges: [{ startOffset, count }] })),
});

test('coverage: functions in every window are per-request work with their fewest calls; the rest is occasional', () => {
  const first = [
    script('file:///r/src/a.ts', [
      ['handle', 0, 30],
      ['tick', 5, 2],
      ['idle', 9, 0],
    ]),
    script('file:///r/bench/client.ts', [['send', 0, 10]]),
    script('node:http', [['request', 0, 10]]),
  ];
  const second = [
    script('file:///r/src/a.ts', [
      ['handle', 0, 20],
      ['', 7, 10],
    ]),
    script('file:///r/src/b.ts', [['tick', 0, 0]]),
  ];
  const probe = coverageOf([first, second], [50, 40], CONTEXT);
  assert.deepEqual(probe.functions, [{ file: 'src/a.ts', name: 'handle', line: 1, calls: 20 }]);
  assert.deepEqual(probe.occasional, [
    { file: 'src/a.ts', name: 'tick', line: 6, calls: 2 },
    { file: 'src/a.ts', name: '(anonymous)', line: 8, calls: 10 },
  ]);
  assert.equal(probe.promises, 40);
  assert.deepEqual(probe.promisesByWindow, [50, 40]);
});

const node = (url: string, functionName: string, selfSize: number, children: HeapNode[] = []): HeapNode => ({
  callFrame: { functionName, url, lineNumber: 3 },
  selfSize,
  children,
});

test('allocation: own bytes are those under an own frame, charged to the innermost one, from the median window', () => {
  const window = (scale: number): HeapNode =>
    node('', '(root)', 0, [
      node('file:///r/bench/client.ts', 'send', 1000 * scale),
      node('file:///r/src/outer.ts', 'outer', 100 * scale, [
        node('node:internal/http', 'write', 50 * scale),
        node('file:///r/src/inner.ts', 'inner', 10 * scale, [node('', 'JSON.parse', 5 * scale)]),
      ]),
    ]);
  const probe = allocationOf([window(1), window(3), window(2)], { ...CONTEXT, windows: 3 });
  assert.equal(probe.ownBytes, 330);
  assert.deepEqual(probe.ownBytesByWindow, [165, 495, 330]);
  assert.equal(probe.totalBytes, 2330);
  assert.deepEqual(probe.functions, [
    { file: 'src/outer.ts', name: 'outer', line: 4, bytes: 300 },
    { file: 'src/inner.ts', name: 'inner', line: 4, bytes: 30 },
  ]);
});

const row = (label: string, over: Partial<FootprintRow> = {}): FootprintRow => ({
  label,
  target: label === 'bare' ? 'bare' : 'gateway',
  workload: 'json',
  files: 30,
  folders: 9,
  functions: 80,
  callsPerRequest: 120,
  promisesPerRequest: 6,
  kbPerRequest: 10,
  processKbPerRequest: 50,
  occasionalFunctions: 0,
  ...over,
});

const result = (plain: FootprintRow, features: string[] = []): FootprintResult => ({
  requestsPerWindow: { coverage: 50, allocation: 100 },
  windows: 3,
  rows: [plain, row('bare', { files: 1, promisesPerRequest: 0, kbPerRequest: 1.3 })],
  plainFilesByFolder: { core: ['src/core/clock.ts'] },
  plainHeaviest: [{ function: 'src/core/clock.ts:now (line 3)', kbPerRequest: 0.5 }],
  plainOccasional: ['src/core/clock.ts:tick ×2'],
  plainFeatureFunctions: features,
});

test('targets: at the limits the plain JSON row meets them; one over, or feature code running, does not', () => {
  const met = (r: FootprintResult): (boolean | undefined)[] => footprintChecks(r).map((c) => c.met);
  assert.deepEqual(met(result(row('switchyard'))), [true, true, true, true]);
  assert.deepEqual(met(result(row('switchyard', { files: 31, promisesPerRequest: 7, kbPerRequest: 10.5 }))), [
    false,
    false,
    false,
    true,
  ]);
  const checks = footprintChecks(result(row('switchyard'), ['src/tenants/scope.ts:allowsEveryModel']));
  assert.equal(checks[3]?.met, false);
  assert.match(checks[3]?.measured ?? '', /src\/tenants\/scope\.ts:allowsEveryModel/);
  assert.ok(footprintChecks(undefined).every((c) => c.met === undefined));
});

test('the markdown has a row per proxy, the files by folder and the heaviest functions', () => {
  const text = renderFootprint(result(row('switchyard')));
  assert.match(text, /\| switchyard \| json \| 30 \| 9 \| 80 \| 120 \| 6 \| 10 \| 50 \| 0 \|/);
  assert.match(text, /\| bare \| json \| 1 \|/);
  assert.match(text, /- core \(1\): clock\.ts/);
  assert.match(text, /src\/core\/clock\.ts:now \(line 3\) \| 0\.5 \|/);
  assert.match(text, /Occasional in the plain JSON request .*`src\/core\/clock\.ts:tick ×2`/);
  assert.equal(renderFootprint(undefined), '');
});

const featureRows = (): FootprintRow[] => [
  row('switchyard'),
  row('bare', { files: 1, promisesPerRequest: 0, kbPerRequest: 1.3 }),
  row('switchyard', { workload: 'sse', files: 33, kbPerRequest: 14 }),
  row('switchyard + 1 limited tenant', {
    target: 'tenant',
    files: 38,
    functions: 95,
    callsPerRequest: 150,
    promisesPerRequest: 10,
    kbPerRequest: 12.5,
  }),
  row('switchyard + [tracing] sample_ratio 1', {
    target: 'tracing',
    files: 36,
    functions: 110,
    callsPerRequest: 300,
    promisesPerRequest: 6,
    kbPerRequest: 40,
  }),
  row('switchyard + [tracing] sample_ratio 0', {
    target: 'tracing-unsampled',
    files: 33,
    functions: 90,
    callsPerRequest: 140,
    kbPerRequest: 15,
  }),
  row('switchyard + [mesh], served locally', {
    target: 'mesh',
    files: 31,
    functions: 82,
    callsPerRequest: 124,
    kbPerRequest: 9.5,
  }),
];

test('extras: each configured feature row minus the plain JSON row, in its own order; sse, bare and plain rows have none', () => {
  const extras = footprintExtras(featureRows());
  assert.deepEqual(
    extras.map((e) => e.label),
    ['1 limited tenant', '[tracing] sample_ratio 1', '[tracing] sample_ratio 0', '[mesh], served locally'],
  );
  assert.deepEqual(extras[0], {
    label: '1 limited tenant',
    files: 8,
    functions: 15,
    callsPerRequest: 30,
    promisesPerRequest: 4,
    kbPerRequest: 2.5,
  });
  assert.deepEqual(extras[3], {
    label: '[mesh], served locally',
    files: 1,
    functions: 2,
    callsPerRequest: 4,
    promisesPerRequest: 0,
    kbPerRequest: -0.5,
  });
  assert.equal(extraText(extras[1]!), '+6 files, +30 functions, +180 calls, +0 promises, +30 KB');
  assert.equal(extraText(extras[3]!), '+1 files, +2 functions, +4 calls, +0 promises, -0.5 KB');
  assert.deepEqual(footprintExtras(featureRows().filter((r) => r.label !== 'switchyard' || r.workload !== 'json')), []);
});

test('the #42 line: "measured" with every extra once tenant, tracing and mesh rows exist; n/a before', () => {
  const full: FootprintResult = { ...result(row('switchyard')), rows: featureRows() };
  const check = footprintExtrasCheck(full);
  assert.equal(check.met, true);
  assert.match(check.measured, /^measured, no bound in the issue/);
  assert.match(check.measured, /1 limited tenant: \+8 files, \+15 functions, \+30 calls, \+4 promises, \+2\.5 KB/);
  assert.match(check.measured, /\[tracing\] sample_ratio 1: \+6 files/);
  assert.match(check.measured, /\[mesh\], served locally: \+1 files/);
  const noMesh: FootprintResult = { ...full, rows: featureRows().filter((r) => r.target !== 'mesh') };
  assert.equal(footprintExtrasCheck(noMesh).met, undefined);
  assert.deepEqual(footprintExtrasCheck(undefined), {
    goal: check.goal,
    measured: 'not measured (`--only footprint`)',
    met: undefined,
  });
});

test('the markdown prints the extras apart, signed', () => {
  const text = renderFootprint({ ...result(row('switchyard')), rows: featureRows() });
  assert.match(text, /### Extra cost of each configured feature over the plain JSON request/);
  assert.match(text, /\| 1 limited tenant \| \+8 \| \+15 \| \+30 \| \+4 \| \+2\.5 \|/);
  assert.match(text, /\| \[mesh\], served locally \| \+1 \| \+2 \| \+4 \| \+0 \| -0\.5 \|/);
  assert.doesNotMatch(renderFootprint(result(row('switchyard'))), /Extra cost/);
});
