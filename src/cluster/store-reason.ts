// Pure: why a store call failed, in the store's terms — its address (never a credential) and the
// root cause: `redis://10.0.0.9:6379/0: connect ECONNREFUSED 10.0.0.9:6379`, `…: no answer within
// 400 ms`, the server's own error reply, or what a nonsense answer was. A client library's own
// sentences ("Stream isn't writeable and enableOfflineQueue options is false", "Connection is
// closed.") say only that it was not connected: the cause is then the connection's last error,
// which the shell (redis-store.ts) keeps from the client's error events.

import { StoreAnswerError } from './store-answers.ts';

/** What a reason shows at most (it goes to /health, logs and the dashboard). */
const REASON_CHARS = 300;

/** The failure as the shell saw it. */
export interface StoreFailure {
  /** The store's URL as configured (credentials, if any, are dropped). */
  readonly url: string;
  readonly error: unknown;
  /** Whether the client was connected (ready) when the call failed. */
  readonly connected: boolean;
  /** The connection's last error or close, as a reason (undefined: none since it was last ready). */
  readonly lastCause: string | undefined;
  /** Each call's bound (ms). */
  readonly timeoutMs: number;
  /** The store's password, never shown (scrubbed from the text, should a message carry it). */
  readonly password: string | undefined;
}

/** The store's URL without its username and password (the config refuses them; a URL given otherwise may carry them). */
export function storeAddress(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return 'the store (its URL does not parse)';
  }
}

/** One line, printable, bounded. */
function oneLine(text: string): string {
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  return flat.length > REASON_CHARS ? `${flat.slice(0, REASON_CHARS)}…` : flat;
}

/** Defence in depth (no message met carries it): a password of a few characters is no secret, and scrubbing it would mangle the text. */
function scrub(text: string, password: string | undefined): string {
  return password === undefined || password.length < 4 ? text : text.split(password).join('***');
}

/** The cause a connection error or close gives (a node system error's own message names the address and code). */
export function connectionCause(error: unknown): string {
  if (error instanceof Error && error.name === 'ParserError') return 'answered bytes that are not the Redis protocol (RESP)';
  if (error instanceof Error) return error.message === '' ? error.name : error.message;
  return String(error);
}

/** The root cause of a failed call, without the address. */
function cause(f: StoreFailure): string {
  const { error } = f;
  if (error instanceof StoreAnswerError) return error.message;
  if (!(error instanceof Error)) return String(error);
  // The server's own error reply (WRONGPASS, OOM, READONLY, BUSY, …): the store's words.
  if (error.name === 'ReplyError') return `store error: ${error.message}`;
  if (error.name === 'ParserError') return connectionCause(error);
  if (error.message === 'Command timed out') return `no answer within ${f.timeoutMs} ms`;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return error.message;
  // Not connected: whatever the client says, the cause is the connection's.
  if (!f.connected) return f.lastCause ?? 'not connected (connecting again)';
  return error.message;
}

/** `<address>: <root cause>`, one printable line, no credential. */
export function storeReason(f: StoreFailure): string {
  return oneLine(scrub(`${storeAddress(f.url)}: ${cause(f)}`, f.password));
}

/** A failed store call: its message is the reason (address and root cause). */
export class StoreError extends Error {
  override readonly name = 'StoreError';
}
