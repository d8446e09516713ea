// Lifecycle under load, against one gateway process (the tests run in order; the last one stops it):
// passive ejection and readmission, 100 SIGHUP reloads during a load that lose no request, and a
// SIGTERM drain that finishes what it can within drain_timeout, refuses new connections and exits 0.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rename, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { request } from 'undici';
import { startGatewayProcess, startSimProcess, type GatewayProcess, type SimFleetProcess } from '#test/fixtures/processes.ts';
import { eventually, httpJson, simRequests } from '#test/fixtures/http.ts';
import {
  assertNoLeaks,
  chatSpec,
  drainFigures,
  FigureTable,
  pause,
  runLoad,
  simNode,
  summary,
  type HealthView,
} from '#test/faults/harness.ts';
import { untilEvent } from '#test/fixtures/events.ts';

const HEALTH_INTERVAL_MS = 5_000;
const EJECT_FOR_MS = 2_000;
const DRAIN_TIMEOUT_MS = 2_500;
const RELOADS = 100;
/** The issue asks for 100 reloads in a 20 s load; 10 s keeps CI time down (a reload every 100 ms). */
const RELOAD_LOAD_MS = 10_000;
const CONCURRENCY = 8;

const table = new FigureTable('Lifecycle');
let sim: SimFleetProcess;
let gw: GatewayProcess;

function node(name: string, kind: string): string {
  const url = sim.url(name);
  return ['[[nodes]]', `name = "${name}"`, `url = "${url}"`, `kind = "${kind}"`].join('\n');
}

/** Variant 0 and 1 differ in a node (n3 present or not) and in upstream limits (pools replaced). */
function configToml(variant: number): string {
  return [
    '[server]',
    'listen = "127.0.0.1:0"',
    `drain_timeout = "${DRAIN_TIMEOUT_MS}ms"`,
    '[health]',
    `interval = "${HEALTH_INTERVAL_MS}ms"`,
    'timeout = "2s"',
    'fail_threshold = 2',
    '[discovery]',
    'interval = "300ms"',
    'timeout = "1500ms"',
    '[upstream]',
    'headers_timeout = "1500ms"',
    `body_idle_timeout = "${variant % 2 === 0 ? '1500ms' : '1600ms'}"`,
    'eject_after_failures = 3',
    `eject_for = "${EJECT_FOR_MS}ms"`,
    node('n1', 'vllm'),
    node('n2', 'llamacpp'),
    variant % 2 === 0 ? node('n3', 'vllm') : '',
    node('good-e', 'vllm'),
    node('bad-e', 'vllm'),
    node('slow', 'vllm'),
  ].join('\n');
}

before(async () => {
  sim = await startSimProcess(
    [
      simNode('n1', 'vllm', ['m']),
      simNode('n2', 'llamacpp', ['m']),
      simNode('n3', 'vllm', ['m']),
      simNode('good-e', 'vllm', ['m-eject']),
      simNode('bad-e', 'vllm', ['m-eject']),
      simNode('slow', 'vllm', ['m-slow'], { tokens_per_second: 20 }),
    ].join('\n\n'),
  );
  gw = await startGatewayProcess(configToml(0));
  await untilEvent(
    async () =>
      (await httpJson('GET', `${gw.url}/health`))
        .json<HealthView>()
        .details.every((d) => d.status === 'healthy' && d.models.names.length > 0),
    [gw.process.output],
    'every node healthy and listed',
  );
});

after(async () => {
  table.print();
  await gw?.stop();
  await sim?.stop();
});

async function ejectedUntil(name: string): Promise<string | null | undefined> {
  const health = (await httpJson('GET', `${gw.url}/health`)).json<HealthView>();
  return health.details.find((d) => d.name === name)?.ejected_until;
}

async function inferenceCount(name: string): Promise<number> {
  return (await simRequests(sim.url(name))).filter((r) => r.path === '/v1/chat/completions').length;
}

test('a node failing requests in a row is ejected (degraded, re-probed at once), traffic moves away, and it is readmitted after eject_for', async () => {
  const send = async (): Promise<string> => {
    const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, JSON.parse(String(chatSpec('m-eject', false).payload)));
    assert.equal(res.status, 200, `failover hides every failure: ${res.text}`);
    return String(res.headers['x-switchyard-node']);
  };
  await httpJson('POST', `${sim.url('bad-e')}/__sim/faults`, { inference: 'error500' });
  try {
    for (let i = 0; i < 30 && (await ejectedUntil('bad-e')) === null; i++) await send();
    const until = await ejectedUntil('bad-e');
    assert.ok(typeof until === 'string', 'bad-e ejected after repeated 5xx');
    const ejectedLog = gw.logs().find((l) => l.msg === 'node ejected after repeated request failures' && l.node === 'bad-e');
    assert.ok(ejectedLog !== undefined, 'the ejection is logged');
    const ejectedAt = Number(ejectedLog.time);
    // Counts as degraded: routing stands it by while a healthy node can serve.
    const explain = (await httpJson('GET', `${gw.url}/admin/explain?model=m-eject`)).text;
    assert.match(explain, /"ejected"/);
    // Traffic moves away: while ejected, the node gets no inference request at all.
    const before = await inferenceCount('bad-e');
    const served = new Set<string>();
    for (let i = 0; i < 10; i++) served.add(await send());
    assert.deepEqual([...served], ['good-e']);
    assert.equal(await inferenceCount('bad-e'), before, 'no request reached the ejected node');
    // Re-probed at once, not at the next of its 5 s health rounds.
    const probes = (await simRequests(sim.url('bad-e'))).filter((r) => r.path === '/health');
    const reprobe = probes.find(
      (p) => (p as { at?: number }).at !== undefined && Number((p as { at?: number }).at) >= ejectedAt - 5,
    );
    assert.ok(reprobe !== undefined, 'a health probe followed the ejection');
    assert.ok(Number((reprobe as { at?: number }).at) - ejectedAt < 1_000, 'the probe came at once');
  } finally {
    await httpJson('POST', `${sim.url('bad-e')}/__sim/faults`, { inference: 'none' });
  }
  // Readmitted after eject_for: the log says so, /health clears it, and it takes traffic again.
  await gw.process.waitForLine(
    (l) => l.includes('node readmitted after ejection') && l.includes('"bad-e"'),
    EJECT_FOR_MS + 3_000,
  );
  assert.equal(await ejectedUntil('bad-e'), null);
  const served = new Set<string>();
  for (let i = 0; i < 10; i++) served.add(await send());
  assert.ok(served.has('bad-e'), `readmitted node serves again: ${[...served].join(',')}`);
});

test(`${RELOADS} SIGHUP reloads during a ${RELOAD_LOAD_MS / 1000} s load (a node removed and re-added, pools replaced) lose no request`, async () => {
  const rssBefore = (await httpJson('GET', `${gw.url}/admin/runtime`)).json<{ rss_bytes: number }>().rss_bytes;
  const reloadedBefore = gw.logs().filter((l) => l.msg === 'config reloaded').length;
  const stop = new AbortController();
  const reloaded = (): number => gw.logs().filter((l) => l.msg === 'config reloaded').length - reloadedBefore;
  const reloading = reloadRepeatedly(RELOADS, RELOAD_LOAD_MS / RELOADS, reloaded).finally(() => stop.abort());
  const tally = await runLoad({
    url: gw.url,
    requests: 5_000,
    concurrency: CONCURRENCY,
    seed: 601,
    model: 'm',
    paceMs: 20,
    maxDurationMs: RELOAD_LOAD_MS + 10_000,
    stopSignal: stop.signal,
  });
  await reloading;
  assert.equal(reloaded(), RELOADS);
  const leaks = await drainFigures({ url: gw.url, nodes: sim.nodes }, rssBefore, ['n1', 'n2', 'n3']);
  table.add({ name: 'SIGHUP reload under load', note: `${RELOADS} reloads in ${RELOAD_LOAD_MS / 1000} s`, tally, leaks });
  assert.equal(tally.clientErrors, 0, summary(tally));
  // Enough traffic to cross every reload (about 5 requests per reload); the rate itself is the bench's.
  assert.ok(tally.sent > 200, summary(tally));
  assert.ok((tally.byNode.n3 ?? 0) > 0, `the node that comes and goes served too: ${summary(tally)}`);
  // Thousands of requests plus 100 rounds of replaced pools in 10 s let V8 grow its heap further
  // than a short case does (RSS up to ~90 MiB here); heap snapshots after 100 and 1,100 reloads
  // showed the live heap growing by only ~2.6 MiB, so this bound stays a guard, not a measure.
  assertNoLeaks(leaks, 3 * CONCURRENCY, 192 * 1024 * 1024);
  assert.equal(gw.logs().filter((l) => l.msg === 'config reload rejected; keeping the running config').length, 0);
});

test('SIGTERM: in-flight requests finish within drain_timeout, new connections are refused, a longer one is cut, exit code 0', async () => {
  // Neither helper rejects: every outcome is asserted below, in order.
  const stream = async (
    maxTokens: number,
  ): Promise<{ status: number; text: string; error: string | undefined; endedAt: number }> => {
    let status = 0;
    let text = '';
    try {
      const res = await request(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: chatSpec('m-slow', true, { max_tokens: maxTokens }).payload,
        signal: AbortSignal.timeout(20_000),
      });
      status = res.statusCode;
      for await (const chunk of res.body) text += String(chunk);
      return { status, text, error: undefined, endedAt: Date.now() };
    } catch (error) {
      return { status, text, error: String(error), endedAt: Date.now() };
    }
  };
  const whole = async (maxTokens: number): Promise<string> => {
    try {
      const res = await httpJson(
        'POST',
        `${gw.url}/v1/chat/completions`,
        JSON.parse(String(chatSpec('m-slow', false, { max_tokens: maxTokens }).payload)),
      );
      return String(res.status);
    } catch (error) {
      return String(error);
    }
  };
  // 20 tokens at 20/s: ~1 s, inside the 2.5 s drain; 200 tokens: ~10 s, past it.
  const short = [stream(20), stream(20), stream(20)];
  const shortWhole = [whole(20), whole(20)];
  const long = stream(200);
  await eventually(
    async () => (await httpJson('GET', `${sim.url('slow')}/__sim/stats`)).json<{ inFlight: number }>().inFlight === 6,
    5_000,
    'six requests in flight',
  );
  const signalledAt = Date.now();
  gw.process.child.kill('SIGTERM');
  const exited = new Promise<number | null>((resolve) => gw.process.child.once('exit', (code) => resolve(code)));
  // New connections are refused at once (the listener is closed).
  const { hostname, port } = new URL(gw.url);
  await eventually(() => refused(hostname, Number(port)), 30_000, 'new connections refused');
  for (const r of await Promise.all(short)) {
    assert.equal(r.error, undefined, 'in-flight streams finish');
    assert.match(r.text, /data: \[DONE\]/, 'in-flight streams finish');
  }
  for (const status of await Promise.all(shortWhole)) assert.equal(status, '200', 'in-flight whole answers finish');
  const cut = await long;
  // Cut, not finished: its 200 tokens at 20/s take 10 s, four times drain_timeout. The cut is
  // judged by what the client got and by a lower bound (never before the drain ran out); an upper
  // bound would only measure how busy the machine is.
  assert.doesNotMatch(cut.text, /\[DONE\]/, 'the request longer than drain_timeout is cut');
  const cutAfter = cut.endedAt - signalledAt;
  assert.ok(cutAfter >= DRAIN_TIMEOUT_MS - 200, `cut after ${cutAfter} ms, not before drain_timeout`);
  assert.equal(await exited, 0);
  // The cut request's upstream work ended too.
  await eventually(
    async () => (await httpJson('GET', `${sim.url('slow')}/__sim/stats`)).json<{ inFlight: number }>().inFlight === 0,
    5_000,
    'node idle',
  );
});

/** Sends `count` SIGHUPs, one per `slotMs`, each with a new config file and each waited for. */
async function reloadRepeatedly(count: number, slotMs: number, reloaded: () => number): Promise<void> {
  for (let i = 1; i <= count; i++) {
    const slot = pause(slotMs);
    // Atomic replace: a reload never reads half a file.
    const tmp = `${gw.configPath}.tmp`;
    await writeFile(tmp, configToml(i));
    await rename(tmp, gw.configPath);
    gw.process.child.kill('SIGHUP');
    // Signals do not queue: wait for this reload before sending the next one.
    await untilEvent(() => reloaded() >= i, [gw.process.output], `reload ${i} applied`);
    await slot;
  }
  await pause(300);
}

function refused(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}
