// Pure: a multipart/form-data body framed so that every parser reads it one way (docs/security.md,
// "One reading of the model"). The gateway reads the form with @fastify/busboy; the node with its
// own parser — vLLM's audio routes with Starlette over python-multipart — and the two disagree on
// much that RFC 7578 leaves loose: busboy takes the first `boundary=` parameter and Starlette the
// last; busboy takes a part's first Content-Disposition header and Starlette its last; busboy skips
// a part whose disposition is not `form-data` and Starlette reads it; busboy makes a part with
// `Content-Type: application/octet-stream` a file and Starlette a field; busboy reads a preamble
// that python-multipart skips differently; they decode `name*=`, escapes in quoted strings, folded
// header lines and the request's `charset` each their own way. So before busboy reads anything
// the framing is checked here, strictly, and anything such parsers could read two ways is refused
// (400, naming it): what passes has one boundary, opens with it, has parts whose header lines are
// plain `Name: value` with exactly one `Content-Disposition: form-data; name=…`, delimiters each
// followed by CRLF or the closing `--`, and `model` parts that are plain UTF-8 text fields.

import { isUtf8 } from 'node:buffer';
import { badRequest, type GatewayError } from '#src/core/errors.ts';

/** The most parts a request may have (the file and its form fields); busboy is held to the same. */
export const MAX_MULTIPART_PARTS = 64;
/** The most header lines one part may have (real clients send two or three). */
const MAX_PART_HEADERS = 16;
/** The largest header block of one part, in bytes (well under busboy's 80 KiB, which it would cut). */
const MAX_PART_HEADER_BYTES = 8 * 1024;

/** `; name=value` (names and unquoted values RFC 9110 tokens): the value a token or a quoted string with neither a backslash nor a line break. */
const PARAM = /^[ \t]*;[ \t]*([!#$%&'*+.^_`|~0-9A-Za-z-]+)=(?:"([^"\\\r\n]*)"|([!#$%&'*+.^_`|~0-9A-Za-z-]+))/;
/** What may follow the last parameter: spaces, one stray `;`. */
const TRAILING = /^[ \t]*;?[ \t]*$/;
/** RFC 2046 bchars: 1 to 70 characters, a space never last. */
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;
/** A part's header line: a token, a colon, at most one space, the value. */
const HEADER_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+): ?([^ \t].*|)$/;
const UTF8_CHARSET = /^utf-?8$/i;

const CR = 0x0d;
const LF = 0x0a;
const DASH = 0x2d;

/** A header value of the form `type; name=value; …`: the type and its parameters (names lower-cased, in order). */
interface ParamValue {
  readonly type: string;
  readonly params: readonly (readonly [string, string])[];
}

/** Reads `type *(; name=value)` strictly; a string naming what is wrong when it cannot be read one way. */
function readParams(value: string, what: string): ParamValue | string {
  const typeEnd = value.search(/[ \t;]|$/);
  const type = value.slice(0, typeEnd).toLowerCase();
  const params: [string, string][] = [];
  const seen = new Set<string>();
  let at = typeEnd;
  while (at < value.length) {
    const rest = value.slice(at);
    const match = PARAM.exec(rest);
    if (match === null) {
      if (TRAILING.test(rest)) break;
      return `${what} has parameters that parsers split differently (at \`${value.slice(at, at + 40)}\`): write each as name=token or name="text" without backslashes`;
    }
    const name = (match[1] ?? '').toLowerCase();
    if (seen.has(name)) return `${what} has "${name}" twice: parsers differ in which one they read`;
    seen.add(name);
    params.push([name, match[2] ?? match[3] ?? '']);
    at += match[0].length;
  }
  return { type, params };
}

function param(value: ParamValue, name: string): string | undefined {
  return value.params.find(([key]) => key === name)?.[1];
}

/** An extended (RFC 2231) form of `name`: `name*`, `name*0`, `name*0*`. */
function extendedForm(value: ParamValue, name: string): string | undefined {
  return value.params.find(([key]) => key.startsWith(`${name}*`))?.[0];
}

/**
 * The boundary of a multipart/form-data content type, read strictly; undefined = not
 * multipart/form-data or no boundary; a refusal when it could be read two ways.
 */
export function multipartBoundary(contentType: string): string | undefined | GatewayError {
  const read = readParams(contentType.trim(), 'Content-Type');
  if (typeof read === 'string')
    return /^multipart\/form-data$/i.test(contentType.trim().split(/[ \t;]/)[0] ?? '') ? badRequest(read) : undefined;
  if (read.type !== 'multipart/form-data') return undefined;
  const extended = extendedForm(read, 'boundary') ?? extendedForm(read, 'charset');
  if (extended !== undefined)
    return badRequest(`Content-Type has an extended parameter "${extended}": parsers differ on it; write boundary=… plainly`);
  const charset = param(read, 'charset');
  if (charset !== undefined && !UTF8_CHARSET.test(charset)) {
    return badRequest(
      `Content-Type names charset "${charset.slice(0, 40)}": parsers read the form's names and values in it or in UTF-8; send UTF-8 (or no charset)`,
    );
  }
  const boundary = param(read, 'boundary');
  if (boundary === undefined) return undefined;
  if (!BOUNDARY.test(boundary))
    return badRequest(
      "the multipart boundary must be 1 to 70 of the characters RFC 2046 allows (letters, digits, '()+_,-./:=? and inner spaces)",
    );
  return boundary;
}

/** What the framing check read of the `model` parts: their values' bytes, in order. */
export interface FramedModel {
  readonly modelValues: readonly Buffer[];
}

/** Checks the framing of `raw` under `boundary`; the `model` parts' values, or a 400 naming what is ambiguous. */
export function checkMultipartFraming(raw: Buffer, boundary: string): FramedModel | GatewayError {
  const open = Buffer.from(`--${boundary}\r\n`, 'latin1');
  const delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  if (raw.compare(open, 0, open.length, 0, Math.min(raw.length, open.length)) !== 0) {
    return badRequest(
      `the multipart body must open with its boundary line (--${boundary} and CRLF): parsers read a preamble differently`,
    );
  }
  const modelValues: Buffer[] = [];
  let at = open.length;
  for (let part = 1; ; part += 1) {
    if (part > MAX_MULTIPART_PARTS) return badRequest(`multipart body has more than ${MAX_MULTIPART_PARTS} parts`);
    const end = raw.indexOf(delimiter, at);
    if (end === -1) return badRequest(`malformed multipart/form-data: part ${part} has no closing boundary (--${boundary}--)`);
    const read = readPart(raw, at, end, part);
    if (typeof read === 'string') return badRequest(read, /`model`/.test(read) ? 'model' : undefined);
    if (read !== undefined) modelValues.push(read);
    const after = end + delimiter.length;
    if (raw[after] === CR && raw[after + 1] === LF) {
      at = after + 2;
      continue;
    }
    if (raw[after] === DASH && raw[after + 1] === DASH) {
      const rest = raw.length - (after + 2);
      if (rest === 0 || (rest === 2 && raw[after + 2] === CR && raw[after + 3] === LF)) return { modelValues };
      return badRequest('multipart body goes on after its closing boundary: parsers differ on whether it holds parts');
    }
    return badRequest(
      `the multipart boundary appears after part ${part} followed by other bytes than CRLF or "--": parsers differ on whether it ends the part`,
    );
  }
}

/** One part [at, end): a string naming what is ambiguous, the value of a `model` part, or undefined for another part. */
function readPart(raw: Buffer, at: number, end: number, part: number): Buffer | string | undefined {
  const blank = raw.indexOf('\r\n\r\n', at - 2);
  if (blank === -1 || blank + 4 > end || blank < at)
    return `malformed multipart/form-data: part ${part} has no headers and blank line before its value`;
  if (blank - at > MAX_PART_HEADER_BYTES) return `multipart part ${part} has more than ${MAX_PART_HEADER_BYTES} bytes of headers`;
  const lines = raw.toString('latin1', at, blank).split('\r\n');
  if (lines.length > MAX_PART_HEADERS) return `multipart part ${part} has more than ${MAX_PART_HEADERS} header lines`;
  const headers: [string, string][] = [];
  for (const line of lines) {
    const match = /[\r\n]/.test(line) ? null : HEADER_LINE.exec(line);
    if (match === null)
      return `multipart part ${part} has a header line that is not a plain \`Name: value\` (a folded line, a bare CR or LF, a space before the colon): parsers read it differently`;
    headers.push([(match[1] ?? '').toLowerCase(), match[2] ?? '']);
  }
  const dispositions = headers.filter(([name]) => name === 'content-disposition');
  if (dispositions.length !== 1) {
    return `multipart part ${part} has ${dispositions.length === 0 ? 'no' : `${dispositions.length}`} Content-Disposition headers: parsers differ in which one they read; send exactly one`;
  }
  const disposition = readParams(dispositions[0]?.[1] ?? '', `multipart part ${part}'s Content-Disposition`);
  if (typeof disposition === 'string') return disposition;
  if (disposition.type !== 'form-data')
    return `multipart part ${part}'s Content-Disposition is "${disposition.type.slice(0, 40)}", not form-data: some parsers skip such a part, others read it`;
  const extendedName = extendedForm(disposition, 'name');
  if (extendedName !== undefined)
    return `multipart part ${part}'s Content-Disposition has "${extendedName}": parsers differ on it; write name="…" plainly`;
  const name = param(disposition, 'name');
  if (name === undefined) return `multipart part ${part}'s Content-Disposition has no name`;
  return name === 'model' ? modelPart(raw.subarray(blank + 4, end), headers, disposition) : undefined;
}

/** The `model` part: a plain UTF-8 text field, read the same by every parser. */
function modelPart(value: Buffer, headers: readonly (readonly [string, string])[], disposition: ParamValue): Buffer | string {
  const file = param(disposition, 'filename') ?? extendedForm(disposition, 'filename');
  if (file !== undefined)
    return 'the `model` form field is sent as a file (it has a filename): parsers differ on whether a file is the field; send it as a plain field';
  for (const [name, text] of headers) {
    if (name === 'content-disposition') continue;
    if (name !== 'content-type')
      return `the \`model\` form field has a ${name} header: send it as a plain field (Content-Disposition only, or Content-Type: text/plain)`;
    const type = readParams(text, "the `model` form field's Content-Type");
    if (typeof type === 'string') return type;
    const charset = param(type, 'charset');
    const plain =
      type.type === 'text/plain' &&
      type.params.every(([key]) => key === 'charset') &&
      (charset === undefined || UTF8_CHARSET.test(charset));
    if (!plain)
      return `the \`model\` form field has Content-Type "${text.slice(0, 60)}": parsers read a field of another type or charset differently; send text/plain in UTF-8`;
  }
  if (!isUtf8(value)) return 'the `model` form field is not valid UTF-8: parsers decode it differently';
  return value;
}
