// Issue 39's footprint test: on a gateway with no tenants, mesh, cluster or tracing, V8 precise
// coverage around plain requests (a JSON chat completion and a streamed one) shows no function of
// those features, nor of proxy/sites/, running — an absent feature contributes nothing. The probe
// (bench/footprint.ts, shared with `npm run bench -- --only footprint`) runs in its own process with
// `--no-maglev --no-turbofan`, killed on every path; the probe test below proves it measures (every
// request enters the handler and the failover loop), so the feature test cannot pass by
// measuring nothing. Nothing is judged by wall time.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { FEATURE_FOLDERS, functionLabel, probeCoverage, type CoverageProbe, type RanFunction } from '../../bench/footprint.ts';

const REQUESTS = 20;
const PROBE = { target: 'gateway', requests: REQUESTS, warmup: 100, windows: 2, timeoutMs: 600_000 } as const;

let json: CoverageProbe;
let sse: CoverageProbe;

before(async () => {
  // One after the other: two no-opt processes at once would only slow each other on a busy machine.
  json = await probeCoverage({ ...PROBE, workload: 'json' });
  sse = await probeCoverage({ ...PROBE, workload: 'sse' });
});

const calls = (probe: CoverageProbe, file: string, name: string): number =>
  probe.functions.find((f) => f.file === file && f.name === name)?.calls ?? 0;

/** Everything that ran in any window: per-request work, occasional work and anything a timer ran beside it. */
const everything = (probe: CoverageProbe): readonly RanFunction[] => [...probe.functions, ...probe.occasional];

test('the probe measures: every plain request enters the inference handler and the failover loop', () => {
  // V8 counts an async function's every entry: the call and each resumption after an await, so a
  // function entered the same way by every request counts a whole multiple of the requests.
  for (const probe of [json, sse]) {
    for (const [file, name] of [
      ['src/proxy/inference/inference-handler.ts', 'handleInference'],
      ['src/proxy/failover/failover-loop.ts', 'startFailoverRun'],
    ] as const) {
      const entries = calls(probe, file, name);
      const where = `${probe.workload}: ${file}:${name} entered ${entries} times for ${REQUESTS} requests`;
      assert.ok(entries >= REQUESTS && entries % REQUESTS === 0, where);
    }
    // The probe fails when its promise hook misses a window's canary promise (bench/footprint.ts):
    // a count of 0 is the gateway making none, not a hook that sees nothing.
    assert.equal(probe.promisesByWindow.length, PROBE.windows, `${probe.workload}: every window's promises were counted`);
    assert.ok(
      probe.promisesByWindow.every((n) => n >= 0),
      `${probe.workload}: the hook saw every window's canary`,
    );
    assert.ok(
      probe.functions.every((f) => f.file.startsWith('src/')),
      'only src/ functions are reported for the gateway',
    );
  }
});

test('a plain request on a gateway without tenants, mesh, cluster or tracing runs none of their functions, nor proxy/sites/', () => {
  const offending = [...new Set([json, sse].flatMap((p) => everything(p).map(functionLabel)))].filter((label) =>
    FEATURE_FOLDERS.some((folder) => label.startsWith(folder)),
  );
  assert.deepEqual(offending, [], `feature code ran for plain requests (file:function): ${offending.join(', ')}`);
});

test("a plain request's first attempt is decided by the route index's plan: no routing filter runs (routing/route.ts, `fast`)", () => {
  // The scheduler's pipeline is the configured one with router-room and its own has-capacity
  // (routing/pipeline.ts); the index must still recognise it, or every request runs the whole pipeline.
  const filtering = [...new Set([json, sse].flatMap((p) => p.functions.map(functionLabel)))].filter((label) =>
    label.startsWith('src/routing/filters/'),
  );
  assert.deepEqual(filtering, [], `routing filters ran for plain first attempts: ${filtering.join(', ')}`);
});
