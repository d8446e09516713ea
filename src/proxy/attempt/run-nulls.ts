// Pure: the `"usage":null` of a whole run of events taken out at once (usage-strip.ts). Asked for
// its usage, a vLLM (or OpenAI) stream ends every chunk's JSON with `,"usage":null`, so every
// run of events names `"usage"`; cutting them event by event (each event's `data:` line found
// byte by byte, the event copied) cost as much as the rest of the stream's reading. Here one pass
// over the run's text finds each mention and checks it is what the event-by-event path would cut
// the same way: the end of its event's one `data:` line, `,"usage":null}`, and the only mention in
// its event. Anything else (another shape, a CR line end, two data lines) is left to that path.

import { Buffer } from 'node:buffer';
import { appended } from '#src/core/appended.ts';
import type { EventRun } from './sse-events.ts';

/** What the kind adds last in each chunk once asked (request/usage-ask.ts `withoutNullUsage`), less its `}`. */
const NULL_MEMBER = ',"usage":null';
const MENTION = '"usage"';
/** `usage` with a value that is not null: the usage chunk, or a count on another chunk. */
export const USAGE_STATED = /"usage"\s*:\s*[^n\s]/;

/** No cut to make (shared: most runs are one event, and many have no null to cut). */
const NO_CUTS: readonly number[] = Object.freeze([]);

/** The events of a run read at once: up to `end` (an event's end), with `cuts` to make in it. */
export interface NullsCut {
  /** Where each `,"usage":null` to be cut starts, ascending (none where the kind's nulls stay). */
  readonly cuts: readonly number[];
  /** Just past the run's first events read here; the ones after need reading event by event. */
  readonly end: number;
}

/**
 * The run's first events that name no usage but `"usage":null` (and not `"timings"`), each
 * mention checked to be the end of its event's one `data:` line, `,"usage":null}`, its event's
 * only mention, lines ending in LF: what the event-by-event path would cut the same way. `taken`:
 * the kind adds the nulls (they are cut); otherwise they stay and only the data line is checked.
 * The events from the first one that fails a check (or states a usage) on are left to that path.
 */
export function nullCuts(run: EventRun, taken: boolean): NullsCut {
  const { text, ends } = run;
  // Grown where the first cut is found (core/appended.ts): a run is most often one event, one cut.
  let cuts: number[] | undefined;
  if (text.includes('\r')) return { cuts: NO_CUTS, end: 0 };
  // `search`, not `exec`: the index alone, no match array built per run.
  const found = text.search(USAGE_STATED);
  const stated = found < 0 ? text.length : found;
  const timings = text.indexOf('"timings"');
  const limit = timings >= 0 && timings < stated ? timings : stated;
  // The events before the one that states a usage or names timings: the most read here.
  let most = 0;
  // Indexed loops here and below: no iterator and result objects per event while the code is cold.
  for (let i = 0; i < ends.length; i += 1) if ((ends[i] as number) <= limit) most = ends[i] as number;
  let event = 0;
  let eventStart = 0;
  let lastEvent = -1;
  for (let at = text.indexOf(MENTION); at >= 0 && at < most; at = text.indexOf(MENTION, at + 1)) {
    while ((ends[event] as number) <= at) eventStart = ends[event++] as number;
    if (event === lastEvent) {
      if (taken) return { cuts: cuts === undefined ? NO_CUTS : cuts.slice(0, -1), end: eventStart };
      continue;
    }
    lastEvent = event;
    // The mention's line: after the LF before it (an event begins after one), up to the LF after it.
    const lineStart = text.lastIndexOf('\n', at) + 1;
    const lineEnd = text.indexOf('\n', at);
    if (!text.startsWith('data:', lineStart) || !onlyDataLine(text, eventStart, lineStart, lineEnd, ends[event] as number))
      return { cuts: cuts ?? NO_CUTS, end: eventStart };
    if (!taken) continue;
    const valueStart = lineStart + (text.charCodeAt(lineStart + 5) === 0x20 ? 6 : 5);
    const cut = at - 1;
    const lastMember =
      cut > valueStart &&
      cut + NULL_MEMBER.length + 1 === lineEnd &&
      text.startsWith(NULL_MEMBER, cut) &&
      text.charCodeAt(lineEnd - 1) === 0x7d;
    if (!lastMember) return { cuts: cuts ?? NO_CUTS, end: eventStart };
    cuts = appended(cuts, cut);
  }
  return { cuts: cuts ?? NO_CUTS, end: most };
}

/** No line of the event but the one at `lineStart` (ending at `lineEnd`) begins with `data:`. */
function onlyDataLine(text: string, eventStart: number, lineStart: number, lineEnd: number, eventEnd: number): boolean {
  if (lineStart > eventStart) {
    if (text.startsWith('data:', eventStart)) return false;
    if (text.indexOf('\ndata:', eventStart) + 1 !== lineStart) return false;
  }
  const next = text.indexOf('\ndata:', lineEnd);
  return next < 0 || next + 1 >= eventEnd;
}

/** `bytes` without the `,"usage":null` starting at each of `cuts` (ascending): one copy. */
export function withoutCuts(bytes: Buffer, cuts: readonly number[]): Buffer {
  if (cuts.length === 0) return bytes;
  const out = Buffer.allocUnsafe(bytes.length - cuts.length * NULL_MEMBER.length);
  let from = 0;
  let to = 0;
  for (let i = 0; i < cuts.length; i += 1) {
    const cut = cuts[i] as number;
    to += bytes.copy(out, to, from, cut);
    from = cut + NULL_MEMBER.length;
  }
  bytes.copy(out, to, from);
  return out;
}
