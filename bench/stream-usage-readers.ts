// Issue 39, product question 1, in process: the per-stream CPU of the answer readers, which is the
// part of a streamed request that depends on how its tokens are counted. One stream of N token
// events as vLLM sends them, one event per chunk (a socket read per token, as at decode speed):
//   strip       the gateway asked (the body rewritten: withUsageAsked), the answer has
//               `"usage":null` on every chunk and a usage chunk; UsageStrip frames each event and
//               takes those out (what a client that did not ask gets today)
//   watch-usage the client asked: the same answer passes untouched, UsageWatch keeps its ends and
//               reads the usage chunk at the end
//   watch-seen  nobody asked: the plain answer passes, UsageWatch counts the generated-text events
//               (`counted: "seen"`: what every unasked stream would be charged without the asking)
// Each figure is CPU µs per stream (process.cpuUsage, median of rounds); the variants alternate within each round.
//
//   node bench/stream-usage-readers.ts [rounds (7)]
//
// Prints one JSON line.

import { Buffer } from 'node:buffer';
import { UsageStrip } from '#src/proxy/attempt/usage-strip.ts';
import { UsageWatch } from '#src/proxy/attempt/usage-watch.ts';
import type { AnswerReader } from '#src/proxy/attempt/answer-reader.ts';
import { withoutNullUsage, withUsageAsked } from '#src/proxy/request/usage-ask.ts';
import { BENCH_MODEL, sseEvents } from './upstream.ts';

const TOKENS = [20, 500] as const;

const body = Buffer.from(
  JSON.stringify({ model: BENCH_MODEL, messages: [{ role: 'user', content: 'Say something short.' }], stream: true }),
);
const resolved = { stream: true, json: JSON.parse(body.toString()) as Record<string, unknown>, body };

interface Variant {
  readonly name: string;
  readonly events: readonly Buffer[];
  readonly run: (events: readonly Buffer[]) => number;
}

function through(reader: AnswerReader, events: readonly Buffer[]): number {
  let bytes = 0;
  for (const event of events) bytes += reader.pass(event).length;
  bytes += reader.flush().length;
  const usage = reader.usage('whole');
  return bytes + (usage?.completionTokens ?? 0);
}

function variants(tokens: number): Variant[] {
  const asked = sseEvents(tokens, true);
  const plain = sseEvents(tokens, false);
  return [
    {
      name: 'strip',
      events: asked,
      run: (events) => {
        const rewritten = withUsageAsked(resolved);
        return (rewritten?.length ?? 0) + through(new UsageStrip({ withoutAddedNulls: withoutNullUsage }), events);
      },
    },
    { name: 'watch-usage', events: asked, run: (events) => through(new UsageWatch('sse'), events) },
    { name: 'watch-seen', events: plain, run: (events) => through(new UsageWatch('sse'), events) },
  ];
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

if (import.meta.main) {
  const rounds = Number(process.argv[2] ?? 7);
  const rows: { tokens: number; variant: string; usPerStream: number; clientBytes: number }[] = [];
  for (const tokens of TOKENS) {
    const list = variants(tokens);
    // The client's bytes per variant (strip and watch-seen must match: the client gets what it would have got unasked).
    const clientBytes = list.map((v) => {
      const reader = v.name === 'strip' ? new UsageStrip({ withoutAddedNulls: withoutNullUsage }) : new UsageWatch('sse');
      return Buffer.concat([...v.events.map((e) => reader.pass(e)), reader.flush()]).length;
    });
    const times = list.map(() => [] as number[]);
    const perRound = Math.max(200, Math.round(200_000 / tokens));
    let sink = 0;
    for (let w = 0; w < perRound; w += 1) for (const v of list) sink += v.run(v.events);
    for (let r = 0; r < rounds; r += 1)
      list.forEach((v, i) => {
        // CPU time, not wall time: the machine is shared, and a wait for the core is not the reader's cost.
        const started = process.cpuUsage();
        for (let k = 0; k < perRound; k += 1) sink += v.run(v.events);
        const used = process.cpuUsage(started);
        times[i]?.push((used.user + used.system) / perRound);
      });
    if (sink === 0) throw new Error('nothing passed');
    list.forEach((v, i) =>
      rows.push({ tokens, variant: v.name, usPerStream: median(times[i] ?? []), clientBytes: clientBytes[i] ?? 0 }),
    );
  }
  process.stdout.write(`${JSON.stringify({ event: 'stream usage readers', rounds, rows })}\n`);
}
