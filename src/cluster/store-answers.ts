// Pure: the store's answers read at the port boundary, one decoder per answer shape of the scripts
// (lua.ts, tenant-lua.ts, usage-lua.ts, switch-lua.ts) and of the few plain commands. An answer
// not of its shape (a store that answers "abc" where a count belongs) throws a StoreAnswerError
// naming what it answered, to which call, and what was expected: the caller treats the store as
// lost (the documented fallback), so no NaN, undefined or guess ever reaches a decision.

import type { AcquireAnswer } from './store-port.ts';
import type { SharedAnswer, StoreDays } from './tenant-store-port.ts';
import type { PublishedPart, TenantPeek } from './usage-board-port.ts';

/** More live replicas than this is not a site: an answer above it is nonsense. */
export const MAX_LIVE_REPLICAS = 100_000;

/** How much of a wrong answer a reason shows. */
const SHOWN_CHARS = 80;

/** A store answer that is not of the shape its call returns. */
export class StoreAnswerError extends Error {
  override readonly name = 'StoreAnswerError';
}

/** The answer as a reason shows it: JSON (control characters escaped), at most SHOWN_CHARS. */
export function shownAnswer(value: unknown): string {
  let text: string;
  if (value === undefined) text = 'nothing';
  else if (typeof value === 'number') text = String(value);
  else if (typeof value === 'bigint') text = `${value}`;
  else {
    try {
      text = JSON.stringify(value, (_key, v: unknown) => (Buffer.isBuffer(v) ? v.toString('latin1') : v)) ?? String(value);
    } catch {
      text = Object.prototype.toString.call(value);
    }
  }
  return text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}…` : text;
}

function wrong(what: string, answer: unknown, expected: string): never {
  throw new StoreAnswerError(`store answered ${shownAnswer(answer)} to ${what}: expected ${expected}`);
}

/** A RESP integer (a JS number from the client) that is a safe integer within [min, max]. */
function isInt(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max;
}

/** A number the script returned as a string (Lua's tostring of a float or an integer): finite, ≥ 0. */
function figure(value: unknown): number | undefined {
  if (typeof value !== 'string' || !/^[0-9][0-9.e+-]*$/i.test(value)) return undefined;
  const n = Number(value);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** An epoch-ms timestamp from the store's clock (TIME), as an integer or as a string. */
function epochMs(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^[0-9]{1,16}$/.test(value) ? Number(value) : value;
  return isInt(n, 1, Number.MAX_SAFE_INTEGER) ? n : undefined;
}

function arrayOf(value: unknown, length: number): readonly unknown[] | undefined {
  return Array.isArray(value) && value.length === length ? value : undefined;
}

/** 0 or 1: a script's flag (release, leave, settle, rejoin, hold, a switch's renew and release). */
export function flagAnswer(answer: unknown, what: string): boolean {
  if (!isInt(answer, 0, 1)) wrong(what, answer, 'the integer 0 or 1');
  return answer === 1;
}

/** Exactly `value` (a script that always answers the same integer: drop, tenant renew, usage publish). */
export function constantAnswer(answer: unknown, what: string, value: number): void {
  if (answer !== value) wrong(what, answer, `the integer ${value}`);
}

/** RENEW: the number of leases it registered, which is the number sent. */
export function renewAnswer(answer: unknown, sent: number): void {
  if (answer !== sent) wrong('renew', answer, `the integer ${sent} (the leases sent)`);
}

/** HEARTBEAT: the live replicas, this one included (1 to MAX_LIVE_REPLICAS). */
export function liveReplicasAnswer(answer: unknown, what = 'heartbeat'): number {
  if (!isInt(answer, 1, MAX_LIVE_REPLICAS))
    wrong(what, answer, `an integer count of live replicas from 1 to ${MAX_LIVE_REPLICAS}`);
  return answer;
}

/** ACQUIRE: {1, used} granted, {0, used, ahead} queued, {2, used} refused by the switch guard (each with 3 integers). */
export function acquireAnswer(answer: unknown): AcquireAnswer {
  const a = arrayOf(answer, 3);
  if (
    a === undefined ||
    !isInt(a[0], 0, 2) ||
    !isInt(a[1], 0, Number.MAX_SAFE_INTEGER) ||
    !isInt(a[2], 0, Number.MAX_SAFE_INTEGER)
  ) {
    return wrong('acquire', answer, 'an array of 3 integers [0, 1 or 2, leases used ≥ 0, waiters ahead ≥ 0]');
  }
  const told = { granted: a[0] === 1, used: a[1], ahead: a[2] };
  return a[0] === 2 ? { ...told, switching: true } : told;
}

/**
 * TENANT_ADMIT: {admitted 0/1, in flight, requests used, tokens used, today's tokens, the day taken
 * 1..3, the store's ms} (the three figures as strings: Lua floats) → the shared answer on `days`.
 */
export function tenantAdmitAnswer(answer: unknown, days: StoreDays): SharedAnswer {
  const a = arrayOf(answer, 7);
  const figures = a === undefined ? [] : [figure(a[2]), figure(a[3]), figure(a[4])];
  const nowMs = a === undefined ? undefined : epochMs(a[6]);
  const [requestsUsed, tokensUsed, todayTokens] = figures;
  if (
    a === undefined ||
    !isInt(a[0], 0, 1) ||
    !isInt(a[1], 0, Number.MAX_SAFE_INTEGER) ||
    requestsUsed === undefined ||
    tokensUsed === undefined ||
    todayTokens === undefined ||
    !isInt(a[5], 1, 3) ||
    nowMs === undefined
  ) {
    return wrong(
      'tenant reserve',
      answer,
      'an array of 7 [0 or 1, in flight, requests used, tokens used, day tokens, day 1..3, store ms]',
    );
  }
  const day = days.days[a[5] - 1] ?? days.days[1];
  return { admitted: a[0] === 1, inFlight: a[1], requestsUsed, tokensUsed, todayTokens, day, storeNowMs: nowMs };
}

/** USAGE_READ: {now ms, {replica, "<at ms> <JSON>", ...}}; a part not of the written shape is skipped (another version wrote it). */
export function usageReadAnswer(answer: unknown): PublishedPart[] {
  const a = arrayOf(answer, 2);
  const nowMs = a === undefined ? undefined : epochMs(a[0]);
  const flat = a?.[1];
  if (nowMs === undefined || !Array.isArray(flat) || flat.length % 2 !== 0 || !flat.every((v) => typeof v === 'string')) {
    return wrong('usage read', answer, 'an array [store ms, [replica, part, ...]] of strings');
  }
  const parts: PublishedPart[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const value = String(flat[i + 1]);
    const space = value.indexOf(' ');
    const atMs = space < 0 ? undefined : epochMs(value.slice(0, space));
    if (atMs === undefined) continue;
    parts.push({ replica: String(flat[i]), ageMs: nowMs - atMs, body: value.slice(space + 1) });
  }
  return parts;
}

/** TENANT_PEEK: {now, running, ru, ra, tu, ta, day's tokens}, absent fields nil. */
export function tenantPeekAnswer(answer: unknown): TenantPeek {
  const a = arrayOf(answer, 7);
  const expected = 'an array of 7 [store ms, running, then requests used and at, tokens used and at, day tokens: numbers or nil]';
  if (a === undefined) return wrong('tenant peek', answer, expected);
  const nowMs = epochMs(a[0]);
  const optional = (v: unknown): number | undefined | false => (v === null ? undefined : (figure(v) ?? false));
  const [ru, ra, tu, ta, day] = [a[2], a[3], a[4], a[5], a[6]].map(optional);
  if (
    nowMs === undefined ||
    !isInt(a[1], 0, Number.MAX_SAFE_INTEGER) ||
    ru === false ||
    ra === false ||
    tu === false ||
    ta === false ||
    day === false
  )
    return wrong('tenant peek', answer, expected);
  const meter = (used: number | undefined, atMs: number | undefined): TenantPeek['requests'] =>
    used === undefined || atMs === undefined ? undefined : { used, atMs };
  return { nowMs, inFlight: a[1], requests: meter(ru, ra), tokens: meter(tu, ta), dayTokens: day ?? 0 };
}

/** SWITCH_TAKE: {1} taken, {0, the holder's 8 fields (string or nil)} held, {2, lease ids...} the victim is in use. */
export type SwitchTakeAnswer =
  | { readonly code: 1 }
  | { readonly code: 0; readonly fields: readonly (string | null)[] }
  | { readonly code: 2; readonly ids: readonly string[] };

export function switchTakeAnswer(answer: unknown, fieldCount: number): SwitchTakeAnswer {
  const a = Array.isArray(answer) ? answer : [];
  const rest = a.slice(1);
  if (a[0] === 1 && a.length === 1) return { code: 1 };
  if (a[0] === 0 && rest.length === fieldCount && rest.every((v) => v === null || typeof v === 'string'))
    return { code: 0, fields: rest as (string | null)[] };
  if (a[0] === 2 && rest.length > 0 && rest.every((v) => typeof v === 'string')) return { code: 2, ids: rest as string[] };
  return wrong('switch take', answer, `[1], [0, ${fieldCount} fields] or [2, lease ids...]`);
}

/** HMGET of a claim's fields: that many strings or nils. */
export function fieldsAnswer(answer: unknown, what: string, count: number): (string | null)[] {
  const a = arrayOf(answer, count);
  if (a === undefined || !a.every((v) => v === null || typeof v === 'string'))
    return wrong(what, answer, `an array of ${count} strings or nils`);
  return a as (string | null)[];
}

/** SET … NX: "OK" taken, nil not. */
export function setNxAnswer(answer: unknown, what: string): boolean {
  if (answer === 'OK') return true;
  if (answer === null) return false;
  return wrong(what, answer, '"OK" or nil');
}

/** What a session target may be: a node's name, or `site <id>` (config/schema-parts.ts NODE_NAME_RULE). */
const SESSION_TARGET = /^(?:site )?[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}$/;

/** SET … PX: "OK". */
export function okAnswer(answer: unknown, what: string): void {
  if (answer !== 'OK') wrong(what, answer, '"OK"');
}

/** GET of a session's target: a node's name or `site <id>`, or nil (none, or expired). */
export function sessionTargetAnswer(answer: unknown): string | undefined {
  if (answer === null) return undefined;
  if (typeof answer !== 'string' || !SESSION_TARGET.test(answer))
    return wrong('session read (GET)', answer, "a node's name, `site <id>` or nil");
  return answer;
}

/** SCRIPT LOAD: the script's SHA1 (40 hex digits). */
export function scriptShaAnswer(answer: unknown, what: string): string {
  if (typeof answer !== 'string' || !/^[0-9a-f]{40}$/i.test(answer))
    return wrong(`SCRIPT LOAD of ${what}`, answer, 'a SHA1 of 40 hex digits');
  return answer;
}

/** A hold as HOLD_LIST read it (hold-lua.ts). */
export interface ListedHold {
  readonly node: string;
  readonly model: string;
  readonly kind: 'loaded' | 'unloaded' | 'released';
  readonly replica: string;
  readonly forMs: number;
  readonly leftMs: number;
}

/** HOLD_LIST: {value, ms left, ...}, each value the JSON a replica wrote; any other shape (or a value not of it) is nonsense. */
export function holdsAnswer(answer: unknown, max: number): ListedHold[] {
  const expected = `an array of at most ${max} pairs [hold JSON {node, model, kind, replica, for}, ms left > 0]`;
  if (!Array.isArray(answer) || answer.length % 2 !== 0 || answer.length > 2 * max) return wrong('holds list', answer, expected);
  const holds: ListedHold[] = [];
  for (let i = 0; i < answer.length; i += 2) {
    const [value, leftMs] = [answer[i], answer[i + 1]];
    let hold: unknown;
    try {
      hold = typeof value === 'string' ? JSON.parse(value) : undefined;
    } catch {
      hold = undefined;
    }
    const h = (typeof hold === 'object' && hold !== null ? hold : {}) as Record<string, unknown>;
    const { node, model, kind, replica } = h;
    if (
      !isInt(leftMs, 1, Number.MAX_SAFE_INTEGER) ||
      typeof node !== 'string' ||
      typeof model !== 'string' ||
      (kind !== 'loaded' && kind !== 'unloaded' && kind !== 'released') ||
      typeof replica !== 'string' ||
      !isInt(h.for, 1, Number.MAX_SAFE_INTEGER)
    ) {
      return wrong('holds list', answer, expected);
    }
    holds.push({ node, model, kind, replica, forMs: h.for, leftMs });
  }
  return holds;
}
