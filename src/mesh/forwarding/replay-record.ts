// Pure: what a run leaves of its forward replay memory for the next one, and which rule a start
// takes from it. One small file per site (replay-record-file.ts does the I/O) holds one of:
//   {"v":1,"state":"running","site":"c","public_key":"…","started_at":<ms>}
//     written at start, before a forward is accepted: a run that dies leaves it;
//   {"v":1,"state":"stopped","site":"c","public_key":"…","started_at":<ms>,"stopped_at":<ms>,
//    "refused_before":<ms>,"max_clock_skew":<ms>,"used":{"a":[["<nonce>",<until ms>],…]}}
//     written at a clean stop, after the memory stopped taking forwards: every signature it used
//     (or held for a request in flight) whose window is still open, and the moment before which it
//     refused every window wholesale, and the skew its windows were reckoned with (a start with a
//     wider skew keeps each entry that much longer: a window ends at created + skew at the latest).
// The memory drops an entry only once its window closed, and a full share refuses new forwards
// instead of dropping one (seen-forwards.ts), so a stopped record holds every signature the run —
// and, through the record it started from, every run before it back to `refused_before` — could
// have accepted and that can still be accepted. A start that finds one therefore refuses exactly
// those (and windows that opened before `refused_before`), not every window that opened before it
// started. A start that finds a "running" record (the run before crashed), a bad record, or one of
// another site or key takes the blackout rule (replay-window.ts). No record at all is a first run,
// unless something shows an earlier one (the caller says: its mesh state file exists).

import { z } from 'zod';
import { NONCE_RULE } from './forward-signature.ts';

/** What a run's memory carries into the next: the floor, and the signatures still acceptable. */
export interface CarriedMemory {
  /** A signature whose window opened before this (wall-clock ms) is refused wholesale. */
  readonly refusedBeforeMs: number;
  /** Used (or held) signatures by site: nonce → until when it can be accepted (wall-clock ms). */
  readonly used: ReadonlyMap<string, ReadonlyMap<string, number>>;
}

export interface RecordOwner {
  readonly site: string;
  /** The site key's public key (base64url, as pinned). */
  readonly publicKey: string;
}

export type ReplayRecord =
  | (RecordOwner & { readonly state: 'running'; readonly startedMs: number })
  | (RecordOwner & {
      readonly state: 'stopped';
      readonly startedMs: number;
      readonly stoppedMs: number;
      readonly skewMs: number;
      readonly carried: CarriedMemory;
    });

/** Bytes one remembered signature may take in the file (site, nonce, until and punctuation), for the read bound. */
export const RECORD_BYTES_PER_ENTRY = 160;
/** Bytes of a record besides its entries (and the per-site keys), for the read bound. */
export const RECORD_BYTES_BASE = 64 * 1024;

const ms = z.int().min(0).max(Number.MAX_SAFE_INTEGER);
const owner = {
  v: z.literal(1),
  site: z.string().min(1).max(64),
  public_key: z.string().min(1).max(64),
  started_at: ms,
} as const;
const recordShape = z.discriminatedUnion('state', [
  z.strictObject({ ...owner, state: z.literal('running') }),
  z.strictObject({
    ...owner,
    state: z.literal('stopped'),
    stopped_at: ms,
    refused_before: ms,
    max_clock_skew: ms,
    used: z.record(z.string().min(1).max(64), z.array(z.tuple([z.string().regex(NONCE_RULE), ms]))),
  }),
]);

export type ParsedRecord =
  { readonly ok: true; readonly record: ReplayRecord } | { readonly ok: false; readonly problem: string };

/** Reads a record; more than `maxEntries` signatures, or times out of order, is not a record this gateway wrote. */
export function parseReplayRecord(text: string, maxEntries: number): ParsedRecord {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, problem: 'not JSON' };
  }
  const parsed = recordShape.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, problem: `${issue?.path.join('.') || 'the file'}: ${issue?.message ?? 'unexpected shape'}` };
  }
  const data = parsed.data;
  const base = { site: data.site, publicKey: data.public_key, startedMs: data.started_at };
  if (data.state === 'running') return { ok: true, record: { ...base, state: 'running' } };
  if (data.stopped_at < data.started_at)
    return { ok: false, problem: `stopped_at (${data.stopped_at}) is before started_at (${data.started_at})` };
  if (data.refused_before > data.stopped_at)
    return { ok: false, problem: `refused_before (${data.refused_before}) is after stopped_at (${data.stopped_at})` };
  const used = new Map<string, Map<string, number>>();
  let entries = 0;
  for (const [site, list] of Object.entries(data.used)) {
    entries += list.length;
    if (entries > maxEntries)
      return { ok: false, problem: `more than ${maxEntries} remembered signatures ([mesh] max_remembered_forwards)` };
    used.set(site, new Map(list));
  }
  return {
    ok: true,
    record: {
      ...base,
      state: 'stopped',
      stoppedMs: data.stopped_at,
      skewMs: data.max_clock_skew,
      carried: { refusedBeforeMs: data.refused_before, used },
    },
  };
}

/** The record a run writes at start, before it accepts a forward. */
export function serializeRunning(owner: RecordOwner, startedMs: number): string {
  return `${JSON.stringify({ v: 1, state: 'running', site: owner.site, public_key: owner.publicKey, started_at: startedMs })}\n`;
}

/** The record a run writes at a clean stop, once its memory takes no more forwards. */
export function serializeStopped(
  owner: RecordOwner,
  startedMs: number,
  stoppedMs: number,
  skewMs: number,
  carried: CarriedMemory,
): string {
  const used: Record<string, [string, number][]> = {};
  for (const [site, entries] of carried.used) if (entries.size > 0) used[site] = [...entries];
  const record = {
    v: 1,
    state: 'stopped',
    site: owner.site,
    public_key: owner.publicKey,
    started_at: startedMs,
    stopped_at: stoppedMs,
    refused_before: Math.max(0, carried.refusedBeforeMs),
    max_clock_skew: skewMs,
    used,
  };
  return `${JSON.stringify(record)}\n`;
}

/** What reading the record file gave. */
export type RecordRead =
  | { readonly kind: 'absent' }
  | { readonly kind: 'unreadable'; readonly problem: string }
  | { readonly kind: 'text'; readonly text: string };

export interface RestartContext extends RecordOwner {
  /** The record file's path (named in every reason). */
  readonly file: string;
  /** This clock now (wall-clock ms). */
  readonly nowMs: number;
  /** `[mesh] max_clock_skew` now (ms). */
  readonly skewMs: number;
  /** `[mesh] max_remembered_forwards`: a record holding more is refused. */
  readonly maxEntries: number;
  /** Whether something shows that this site ran before (its mesh state file exists). */
  readonly ranBefore: boolean;
}

export type RestartRule =
  /** No earlier run: nothing to refuse for it. */
  | { readonly rule: 'first'; readonly reason: string }
  /** The run before stopped cleanly: its memory is carried on. */
  | { readonly rule: 'carry'; readonly carried: CarriedMemory; readonly reason: string }
  /** Every signature whose window opened before this start is refused; `warn` = the record was bad. */
  | { readonly rule: 'blackout'; readonly reason: string; readonly warn: boolean };

/** Which rule a start takes from what it read of the record file. */
export function restartRule(read: RecordRead, ctx: RestartContext): RestartRule {
  const { file } = ctx;
  if (read.kind === 'absent') {
    return ctx.ranBefore
      ? {
          rule: 'blackout',
          reason: `no replay record ${file}, though this site ran before (its mesh state file exists): an older version, or the record was removed`,
          warn: false,
        }
      : { rule: 'first', reason: `no replay record ${file} and no sign of an earlier run: this site's first run` };
  }
  if (read.kind === 'unreadable') return { rule: 'blackout', reason: `replay record ${file}: ${read.problem}`, warn: true };
  const parsed = parseReplayRecord(read.text, ctx.maxEntries);
  if (!parsed.ok) return { rule: 'blackout', reason: `replay record ${file}: ${parsed.problem}`, warn: true };
  const record = parsed.record;
  if (record.site !== ctx.site)
    return {
      rule: 'blackout',
      reason: `replay record ${file} is site '${record.site}''s, not this site's ('${ctx.site}')`,
      warn: true,
    };
  if (record.publicKey !== ctx.publicKey)
    return {
      rule: 'blackout',
      reason: `replay record ${file} was written under another site key (${record.publicKey})`,
      warn: true,
    };
  if (record.state === 'running') {
    return {
      rule: 'blackout',
      reason: `the run started at ${iso(record.startedMs)} did not stop cleanly (replay record ${file} says it is still running): what it accepted is not known`,
      warn: true,
    };
  }
  if (record.stoppedMs > ctx.nowMs) {
    return {
      rule: 'blackout',
      reason: `replay record ${file} says the run before stopped at ${iso(record.stoppedMs)}, ${Math.ceil((record.stoppedMs - ctx.nowMs) / 1000)} s ahead of this clock`,
      warn: true,
    };
  }
  // A wider skew now: a window may end up to that much later than the run before reckoned.
  const widerMs = Math.max(0, ctx.skewMs - record.skewMs);
  const used = new Map<string, Map<string, number>>();
  let kept = 0;
  for (const [site, entries] of record.carried.used) {
    const open = new Map(
      [...entries]
        .map(([nonce, untilMs]): [string, number] => [nonce, untilMs + widerMs])
        .filter(([, untilMs]) => untilMs >= ctx.nowMs),
    );
    kept += open.size;
    if (open.size > 0) used.set(site, open);
  }
  return {
    rule: 'carry',
    carried: { refusedBeforeMs: record.carried.refusedBeforeMs, used },
    reason: `the run before stopped cleanly at ${iso(record.stoppedMs)}: its ${kept} signatures still acceptable are refused, others are taken`,
  };
}

function iso(msValue: number): string {
  return new Date(msValue).toISOString();
}
