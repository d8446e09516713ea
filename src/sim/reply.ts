// A complete HTTP answer as plain data, so kind modules build answers without touching sockets.

export interface Reply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** The body is serialised with JSON.stringify, so key order is the literal's order. */
export function jsonReply(status: number, body: unknown, headers: Readonly<Record<string, string>>): Reply {
  return { status, headers, body: JSON.stringify(body) };
}

export function textReply(status: number, body: string, headers: Readonly<Record<string, string>>): Reply {
  return { status, headers, body };
}

/** One server-sent event; `data` is JSON-serialised unless it is already a string (e.g. `[DONE]`). */
export interface SseEvent {
  readonly event?: string;
  readonly data: unknown;
}

export function formatSseEvent(event: SseEvent): string {
  const data = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
  return `${event.event === undefined ? '' : `event: ${event.event}\n`}data: ${data}\n\n`;
}

export const SSE_DONE: SseEvent = { data: '[DONE]' };
