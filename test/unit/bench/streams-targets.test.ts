// The ten-thousand-streams workload's pure parts: each stream's bytes are a function of its id and
// the event's index (what lets the client check byte for byte without keeping them), the id is read
// from the body, and the issue-28 target rows judge the figures (n/a when not measured, the
// descriptor limit named when it scaled the run down).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { streamEvent, streamId } from '../../../bench/stream-upstream.ts';
import { issue28Checks } from '../../../bench/targets-28.ts';
import type { StreamsResult, StreamsRow } from '../../../bench/streams-10k.ts';

test('a stream: its events depend on id and index only, end with [DONE], and say stop on the last token', () => {
  assert.equal(streamEvent('s1', 0, 3), streamEvent('s1', 0, 3));
  assert.notEqual(streamEvent('s1', 0, 3), streamEvent('s2', 0, 3));
  assert.equal(streamEvent('s1', 3, 3), 'data: [DONE]\n\n');
  const last = JSON.parse(streamEvent('s1', 2, 3).slice('data: '.length)) as { choices: { finish_reason: string | null }[] };
  assert.equal(last.choices[0]?.finish_reason, 'stop');
  assert.ok(streamEvent('s1', 1, 3).endsWith('\n\n'));
});

test('the stream id is read from the body', () => {
  for (const [body, id] of [
    ['{"model":"m","stream":true,"user":"s42"}', 's42'],
    ['{"user" : "s7","stream":true}', 's7'],
    ['{"user":"alice"}', undefined],
    ['{}', undefined],
  ] as const)
    assert.equal(streamId(body), id, body);
});

const row = (over: Partial<StreamsRow>): StreamsRow => ({
  target: 'switchyard',
  streams: 100,
  complete: 100,
  broken: 0,
  maxOpen: 100,
  gapP50Ms: 50,
  gapP99Ms: 53,
  gapP999Ms: 60,
  openLateP99Ms: 1,
  clientLoopDelayP99Ms: 2,
  clientCpuPercent: 10,
  upstreamCpuPercent: 10,
  errors: {},
  upstreamCutShort: 0,
  tcp: {},
  tripP50Ms: 1,
  tripP99Ms: 2,
  tripP999Ms: 3,
  ...over,
});
const result = (over: Partial<StreamsResult>, ours: Partial<StreamsRow>, direct: Partial<StreamsRow> = {}): StreamsResult => ({
  requested: 100,
  streams: 100,
  tokens: 120,
  intervalMs: 50,
  openRate: 1000,
  fileLimit: 65536,
  acceptQueues: { somaxconn: 65536, synBacklog: 65536 },
  listenBacklog: 1124,
  addedGapP99Ms: 3,
  addedTripP50Ms: 0.1,
  addedTripP99Ms: 1,
  rows: [row({ target: 'direct', gapP99Ms: 50, ...direct }), row(ours)],
  ...over,
});
const streamChecks = (streams: StreamsResult | undefined) =>
  issue28Checks({ proxy: [], added: [], routes: [], control: undefined, lean: undefined, tails: undefined, streams }).filter(
    (c) => c.goal.includes('streams:'),
  );

test('the streams targets: met, missed, n/a, and a run scaled down by the descriptor limit', () => {
  const cases: { name: string; streams: StreamsResult | undefined; met: (boolean | undefined)[]; text?: RegExp }[] = [
    { name: 'not measured', streams: undefined, met: [undefined, undefined, undefined] },
    {
      name: 'all met',
      streams: result({}, { rssPerStreamKB: 20, gatewayIdleRssMB: 100, gatewayRssAtNMB: 102 }),
      met: [true, true, true],
    },
    {
      name: 'a broken stream, too much memory, a slow gap',
      streams: result(
        { addedTripP99Ms: 9 },
        { complete: 99, broken: 1, rssPerStreamKB: 51, errors: { 'request ECONNRESET': 1 } },
      ),
      met: [false, false, false],
      text: /request ECONNRESET 1/,
    },
    {
      name: 'resets with a short accept queue',
      streams: result(
        { acceptQueues: { somaxconn: 4096, synBacklog: 2048 }, listenBacklog: 11024 },
        { complete: 98, broken: 2, rssPerStreamKB: 10, errors: { 'request ECONNRESET': 2 } },
      ),
      met: [false, true, true],
      text: /accept queue capped at somaxconn 4096 \(listen_backlog 11024\)/,
    },
    {
      name: 'a direct row bound by its own client',
      streams: result({ addedTripP99Ms: -10 }, { rssPerStreamKB: 10 }, { clientLoopDelayP99Ms: 1054 }),
      met: [true, true, undefined],
      text: /not resolvable in this run: the direct row's client loop delay p99 was 1054 ms/,
    },
    {
      name: 'scaled down',
      streams: result(
        { requested: 10000, streams: 9900, fileLimit: 20000 },
        { streams: 9900, complete: 9900, rssPerStreamKB: 10 },
      ),
      met: [true, true, true],
      text: /10000 asked; RLIMIT_NOFILE 20000 allows 9900/,
    },
  ];
  for (const c of cases) {
    const checks = streamChecks(c.streams);
    assert.deepEqual(
      checks.map((x) => x.met),
      c.met,
      c.name,
    );
    if (c.text !== undefined) assert.match(checks.map((x) => x.measured).join('\n'), c.text, c.name);
  }
});

test('the kernel counters: nstat names from the name/value line pairs, and only those that moved', async () => {
  const { parseCounterTables, countersMoved, readTcpCounters } = await import('../../../bench/tcp-counters.ts');
  const parsed = parseCounterTables('TcpExt: ListenOverflows ListenDrops\nTcpExt: 7 9\n\nTcp: RtoMin OutRsts\nTcp: 200 3\n');
  assert.equal(parsed.get('TcpExtListenOverflows'), 7);
  assert.equal(parsed.get('TcpOutRsts'), 3);
  const zero = readTcpCounters();
  assert.deepEqual(countersMoved(zero, { ...zero, TcpOutRsts: zero.TcpOutRsts + 2 }), { TcpOutRsts: 2 });
});

test('the stamp before each event: read whole, partial while its line arrives, absent otherwise', async () => {
  const { readStamp, stampLine } = await import('../../../bench/stream-upstream.ts');
  assert.deepEqual(readStamp(`${stampLine(123)}data: x`), { us: 123, length: ': t=123\n'.length });
  for (const partial of ['', ':', ': t', ': t=', ': t=12']) assert.equal(readStamp(partial), 'partial', partial);
  for (const bad of ['data: x', ': t=1x\n', ': x\n']) assert.equal(readStamp(bad), undefined, bad);
});
