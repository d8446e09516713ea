// The request id: the client's `x-request-id` when it is well-formed and bounded, else one the
// gateway makes. The same id goes to the node (or the next site) and back to the client, and names
// the request in the request log, so a client's own id can be followed end to end.

/** Longest client id accepted (a UUID is 36; a W3C trace id 32). */
export const MAX_REQUEST_ID_LENGTH = 128;

/** Visible ASCII without quotes, backslashes or separators a log reader or header parser could trip on. */
const WELL_FORMED = /^[A-Za-z0-9._:+=/@-]+$/;

/** The client's id when it is one well-formed, bounded value; undefined = make one. */
export function clientRequestId(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  if (header.length === 0 || header.length > MAX_REQUEST_ID_LENGTH) return undefined;
  return WELL_FORMED.test(header) ? header : undefined;
}

/** The id this request goes by: the client's (if well-formed), else a new one. */
export function requestIdFor(header: string | string[] | undefined, make: () => string): string {
  return clientRequestId(header) ?? make();
}
