// The `"usage":null` of a vLLM stream asked for its usage, cut a run of events at once
// (run-nulls.ts) or event by event: either way the client gets what the node would have sent
// unasked, byte for byte, and the same tokens are counted. Generated vLLM-like streams (and the
// shapes that must go event by event: nulls mid-chunk, spaces, two data lines, CRLF, a second
// mention, a usage chunk in the same run), each cut at every byte and in random pieces.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UsageStrip } from '#src/proxy/attempt/usage-strip.ts';
import { nullCuts, withoutCuts } from '#src/proxy/attempt/run-nulls.ts';
import { EventFramer } from '#src/proxy/attempt/sse-events.ts';
import { withoutNullUsage } from '#src/proxy/request/usage-ask.ts';
// A seeded generator (the simulator's mulberry32): the same streams every run.
import { seededRandom as random } from '#src/sim/seeded-random.ts';

interface Piece {
  readonly asked: string;
  readonly unasked: string;
  /** Token markers the per-event path counts in it. */
  readonly tokens: number;
}

const CONTENTS = ['tok', ' wörld ✓', '日本', '', 'usage', '"usage":null', 'data: x', '\\n', 'a\nb', '}'];
const head = '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{';

function piece(pick: () => number, nullsAdded: boolean): Piece {
  const content = CONTENTS[Math.floor(pick() * CONTENTS.length)] as string;
  const delta = `"content":${JSON.stringify(content)}`;
  const counted = content === '' ? 0 : 1;
  const kept = (asked: string, tokens = counted): Piece => ({ asked, unasked: asked, tokens });
  const body = `${head}${delta}},"logprobs":null,"finish_reason":null}]`;
  switch (Math.floor(pick() * 10)) {
    case 0:
      return kept(': ping\n\n', 0);
    case 1: // nulls mid-chunk
      return nullsAdded
        ? { asked: `data: {"usage":null,${body.slice(1)}}\n\n`, unasked: `data: {${body.slice(1)}}\n\n`, tokens: counted }
        : kept(`data: {"usage":null,${body.slice(1)}}\n\n`);
    case 2: // an event line, and a data line without its space
      return nullsAdded
        ? { asked: `event: c\ndata:${body},"usage":null}\n\n`, unasked: `event: c\ndata:${body}}\n\n`, tokens: counted }
        : kept(`event: c\ndata:${body},"usage":null}\n\n`);
    case 3: // two data lines: not one chunk's JSON, passed as is and not counted
      return kept(`data: ${body},\ndata: "usage":null}\n\n`, 0);
    case 4: // the value "usage" too: a second mention
      return nullsAdded
        ? { asked: `data: ${head}"role":"usage"}}],"usage":null}\n\n`, unasked: `data: ${head}"role":"usage"}}]}\n\n`, tokens: 0 }
        : kept(`data: ${head}"role":"usage"}}],"usage":null}\n\n`, 0);
    case 5: // a chunk without the null, and one with no JSON
      return pick() < 0.5 ? kept(`data: ${body}}\n\n`) : kept('data: hello\n\n', 0);
    case 6: // a comment line after the data line names "usage" too
      return nullsAdded
        ? { asked: `data: ${body},"usage":null}\n: "usage"\n\n`, unasked: `data: ${body}}\n: "usage"\n\n`, tokens: counted }
        : kept(`data: ${body},"usage":null}\n: "usage"\n\n`);
    default: // vLLM's own shape: the null last
      return nullsAdded
        ? { asked: `data: ${body},"usage":null}\n\n`, unasked: `data: ${body}}\n\n`, tokens: counted }
        : kept(`data: ${body},"usage":null}\n\n`);
  }
}

interface Generated {
  readonly asked: Buffer;
  readonly unasked: Buffer;
  readonly tokens: number;
  readonly nullsAdded: boolean;
  readonly usageChunk: boolean;
}

function stream(seed: number): Generated {
  const pick = random(seed);
  const nullsAdded = pick() < 0.75;
  const pieces = Array.from({ length: 3 + Math.floor(pick() * 8) }, () => piece(pick, nullsAdded));
  let asked = pieces.map((p) => p.asked).join('');
  let unasked = pieces.map((p) => p.unasked).join('');
  const usageChunk = pick() < 0.7;
  if (usageChunk)
    asked +=
      'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":7,"total_tokens":9,"completion_tokens":2}}\n\n';
  if (pick() < 0.8) {
    asked += 'data: [DONE]\n\n';
    unasked += 'data: [DONE]\n\n';
  }
  if (pick() < 0.2) {
    asked = asked.replaceAll('\n', '\r\n');
    unasked = unasked.replaceAll('\n', '\r\n');
  }
  return {
    asked: Buffer.from(asked),
    unasked: Buffer.from(unasked),
    tokens: pieces.reduce((n, p) => n + p.tokens, 0),
    nullsAdded,
    usageChunk,
  };
}

function through(s: Generated, chunks: readonly Buffer[]): { out: Buffer; strip: UsageStrip } {
  const strip = new UsageStrip({ withoutAddedNulls: s.nullsAdded ? withoutNullUsage : undefined });
  const out = chunks.map((c) => strip.pass(c));
  out.push(strip.flush());
  return { out: Buffer.concat(out), strip };
}

function check(s: Generated, chunks: readonly Buffer[], label: string): void {
  const { out, strip } = through(s, chunks);
  assert.ok(
    out.equals(s.unasked),
    `${label}: ${JSON.stringify(out.toString('utf8'))}\nwanted ${JSON.stringify(s.unasked.toString('utf8'))}`,
  );
  assert.equal(strip.seenTokens(), s.tokens, `${label}: tokens`);
  if (s.usageChunk) assert.deepEqual(strip.usage('whole'), { promptTokens: 7, completionTokens: 2, counted: 'usage' }, label);
}

const STREAMS = Array.from({ length: 48 }, (_, i) => stream(i + 1));

test('generated vLLM-like streams: whole, one event a chunk, one byte a chunk', () => {
  for (const [i, s] of STREAMS.entries()) {
    check(s, [s.asked], `stream ${i} whole`);
    check(
      s,
      Array.from(s.asked, (_, at) => s.asked.subarray(at, at + 1)),
      `stream ${i} by byte`,
    );
    const events = s.asked
      .toString('latin1')
      .split(/(?<=\r?\n\r?\n)/)
      .map((e) => Buffer.from(e, 'latin1'));
    check(s, events, `stream ${i} by event`);
  }
});

test('generated vLLM-like streams, cut at every byte (mid-event, mid-UTF-8, between CR and LF)', () => {
  for (const [i, s] of STREAMS.entries()) {
    for (let cut = 1; cut < s.asked.length; cut++)
      check(s, [s.asked.subarray(0, cut), s.asked.subarray(cut)], `stream ${i} cut at ${cut}`);
  }
});

test('generated vLLM-like streams, in random pieces', () => {
  const pick = random(99);
  for (const [i, s] of STREAMS.entries()) {
    for (let round = 0; round < 20; round++) {
      const chunks: Buffer[] = [];
      for (let at = 0; at < s.asked.length;) {
        const size = 1 + Math.floor(pick() * 400);
        chunks.push(s.asked.subarray(at, at + size));
        at += size;
      }
      check(s, chunks, `stream ${i} round ${round}`);
    }
  }
});

test('a run of vLLM chunks is cut in one pass, up to the usage chunk that follows them', () => {
  const framer = new EventFramer();
  const chunk = (c: string): string => `data: {"choices":[{"delta":{"content":"${c}"}}],"usage":null}\n\n`;
  const usage = 'data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}\n\n';
  const run = framer.push(Buffer.from(chunk('a') + chunk('b') + usage));
  const read = nullCuts(run, true);
  assert.equal(read.end, chunk('a').length * 2);
  assert.deepEqual(read.cuts, [chunk('a').indexOf(',"usage"'), chunk('a').length + chunk('b').indexOf(',"usage"')]);
  assert.equal(
    String(withoutCuts(run.bytes.subarray(0, read.end), read.cuts)),
    'data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: {"choices":[{"delta":{"content":"b"}}]}\n\n',
  );
  assert.deepEqual(nullCuts(run, false), { cuts: [], end: read.end });
});

test('a run that needs its events read one by one is not cut: CR line ends, nulls mid-chunk, two data lines', () => {
  for (const text of [
    'data: {"a":1,"usage":null}\r\n\r\n',
    'data: {"usage":null,"a":1}\n\n',
    'data: {"a":1,\ndata: "usage":null}\n\n',
    'data: {"usage":null}\n\n',
    'data: ,"usage":null}\n\n',
  ]) {
    const run = new EventFramer().push(Buffer.from(text));
    assert.deepEqual(nullCuts(run, true), { cuts: [], end: 0 }, JSON.stringify(text));
  }
});
