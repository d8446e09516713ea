// A multipart/form-data request (the audio routes): its text fields read with the streaming
// parser (@fastify/busboy) from the body already read in memory (bounded in bytes by
// [server] max_request_body_bytes, in time by the server's request timeout), and the bytes sent
// upstream exactly as the client sent them. Only when the model resolves to another name (an
// alias, or the nodes' own spelling) is the `model` part's value replaced, in place: every other
// byte — the audio, the other fields, the boundary — stays the client's. Before busboy reads it,
// the framing is checked to be one that every parser reads alike (multipart-framing.ts), and the
// `model` busboy read must be the one that check read.

import { createRequire } from 'node:module';
import type { Busboy as BusboyFactory } from '@fastify/busboy';
import { badRequest, GatewayError } from '#src/core/errors.ts';
import type { ModelCatalog, ResolvedRequest } from './request-model.ts';
import { resolveModelName } from './request-model.ts';
import { checkMultipartFraming, MAX_MULTIPART_PARTS, multipartBoundary } from './multipart-framing.ts';

/** The multipart parser (CommonJS) loads with the first multipart request: no other endpoint needs it. */
const load = createRequire(import.meta.url);
const Busboy = (...args: Parameters<typeof BusboyFactory>): ReturnType<typeof BusboyFactory> =>
  (load('@fastify/busboy') as typeof import('@fastify/busboy')).Busboy(...args);

/** The longest text field kept (a model name, a language, a prompt for the transcription). */
export const MAX_MULTIPART_FIELD_BYTES = 64 * 1024;
export { MAX_MULTIPART_PARTS };

export interface MultipartFields {
  /** Every text field, by name (the first of a repeated name; a repeated `model` is refused). */
  readonly fields: Readonly<Record<string, string>>;
  /** How many times `model` appeared. */
  readonly modelCount: number;
}

/** The boundary a multipart content-type names, read strictly (multipart-framing.ts); undefined = none, or ambiguous. */
export function boundaryOf(contentType: string): string | undefined {
  const boundary = multipartBoundary(contentType);
  return typeof boundary === 'string' ? boundary : undefined;
}

const NO_BOUNDARY = 'this endpoint takes multipart/form-data with a boundary (Content-Type: multipart/form-data; boundary=…)';

/** Pure over the bytes: the text fields of a multipart body, or a 400 naming what is wrong. */
export function readMultipartFields(raw: Buffer, contentType: string): Promise<MultipartFields | GatewayError> {
  const boundary = multipartBoundary(contentType);
  if (boundary === undefined) return Promise.resolve(badRequest(NO_BOUNDARY));
  if (boundary instanceof GatewayError) return Promise.resolve(boundary);
  return new Promise((resolve) => {
    const fields: Record<string, string> = {};
    let modelCount = 0;
    let problem: GatewayError | undefined;
    const fail = (error: GatewayError): void => {
      problem ??= error;
    };
    let parser: ReturnType<typeof Busboy>;
    try {
      parser = Busboy({
        headers: { 'content-type': contentType },
        limits: { fieldSize: MAX_MULTIPART_FIELD_BYTES, parts: MAX_MULTIPART_PARTS, fieldNameSize: 200 },
      });
    } catch (error) {
      resolve(badRequest(`malformed multipart/form-data: ${(error as Error).message}`));
      return;
    }
    parser.on('field', (name: string, value: string, _nameTruncated: boolean, valueTruncated: boolean) => {
      if (valueTruncated)
        return fail(
          badRequest(
            `multipart field \`${name.slice(0, 80)}\` is longer than ${MAX_MULTIPART_FIELD_BYTES} bytes`,
            name === 'model' ? 'model' : undefined,
          ),
        );
      if (name === 'model') modelCount += 1;
      if (!Object.hasOwn(fields, name)) fields[name] = value;
    });
    parser.on('file', (_name: string, stream: NodeJS.ReadableStream) => {
      stream.resume();
    });
    parser.on('partsLimit', () => fail(badRequest(`multipart body has more than ${MAX_MULTIPART_PARTS} parts`)));
    parser.on('error', (error: unknown) => {
      resolve(badRequest(`malformed multipart/form-data: ${error instanceof Error ? error.message : String(error)}`));
    });
    parser.on('finish', () => resolve(problem ?? { fields, modelCount }));
    parser.end(raw);
  });
}

/**
 * The request a multipart body makes: its model resolved as on the JSON routes (default, aliases,
 * the nodes' names), its text fields as `json` for the later steps, and the bytes to send.
 */
export async function resolveMultipartRequest(
  raw: Buffer,
  contentType: string,
  catalog: ModelCatalog,
  servedName: (name: string) => string = (name) => name,
): Promise<ResolvedRequest | GatewayError> {
  const boundary = multipartBoundary(contentType);
  if (boundary === undefined) return badRequest(NO_BOUNDARY);
  if (boundary instanceof GatewayError) return boundary;
  // Every part named `model`, field or file, as a parser that reads the framing strictly sees it.
  const framed = checkMultipartFraming(raw, boundary);
  if (framed instanceof GatewayError) return framed;
  if (framed.modelValues.length > 1)
    return badRequest('multipart field `model` is given more than once: parsers differ in which one they read', 'model');
  const read = await readMultipartFields(raw, contentType);
  if (read instanceof GatewayError) return read;
  const given = read.fields.model;
  const seen = framed.modelValues[0]?.toString('utf8');
  // Busboy must have read the very field the framing check read (one reading), or nothing is sent.
  if (read.modelCount !== framed.modelValues.length || given !== seen)
    return badRequest('the multipart body reads two ways: its `model` field is not the one every parser sees', 'model');
  const requestedModel = given === undefined || given === '' ? catalog.defaultModel : given;
  if (requestedModel === undefined)
    return badRequest('you must provide a `model` form field (and no models.default is configured)', 'model');
  const named = resolveModelName(requestedModel, catalog, servedName);
  let body = raw;
  if (named.model !== given) {
    const rewritten = withModelPart(raw, boundary, given, named.model);
    if (rewritten === undefined)
      return badRequest(
        'the `model` form field could not be rewritten to the served name: send it as a plain field (Content-Disposition: form-data; name="model")',
        'model',
      );
    body = rewritten;
  }
  return { ...named, requestedModel, stream: read.fields.stream === 'true', body, json: read.fields };
}

/**
 * Pure: the body with the `model` part's value set to `model` (inserted as a new first part when
 * the client sent none: the default model). Undefined when the part cannot be found as one plain field.
 */
export function withModelPart(raw: Buffer, boundary: string, given: string | undefined, model: string): Buffer | undefined {
  const delimiter = Buffer.from(`--${boundary}`, 'latin1');
  if (given === undefined || given === '') {
    if (given === '') return replaceModelValue(raw, delimiter, '', model);
    if (raw.indexOf(delimiter) !== 0) return undefined;
    const part = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\n${model}\r\n`, 'utf8');
    return Buffer.concat([part, raw]);
  }
  return replaceModelValue(raw, delimiter, given, model);
}

function replaceModelValue(raw: Buffer, delimiter: Buffer, given: string, model: string): Buffer | undefined {
  const next = Buffer.concat([Buffer.from('\r\n', 'latin1'), delimiter]);
  // The first delimiter opens the body, or follows a preamble's CRLF.
  const afterPreamble = raw.indexOf(next);
  let at = raw.indexOf(delimiter) === 0 ? 0 : afterPreamble === -1 ? -1 : afterPreamble + 2;
  let found: { start: number; end: number } | undefined;
  while (at !== -1) {
    const headersStart = raw.indexOf('\r\n', at + delimiter.length);
    const end = raw.indexOf(next, at + delimiter.length);
    if (headersStart === -1 || end === -1) break;
    const headersEnd = raw.indexOf('\r\n\r\n', headersStart);
    if (headersEnd !== -1 && headersEnd < end) {
      const headers = raw.subarray(headersStart + 2, headersEnd).toString('latin1');
      if (isModelField(headers) && raw.subarray(headersEnd + 4, end).toString('utf8') === given) {
        if (found !== undefined) return undefined;
        found = { start: headersEnd + 4, end };
      }
    }
    at = end + 2;
  }
  if (found === undefined) return undefined;
  return Buffer.concat([raw.subarray(0, found.start), Buffer.from(model, 'utf8'), raw.subarray(found.end)]);
}

function isModelField(headers: string): boolean {
  const disposition = headers.split('\r\n').find((line) => /^content-disposition\s*:/i.test(line));
  if (disposition === undefined || /;\s*filename\*?=/i.test(disposition)) return false;
  return /;\s*name=(?:"model"|model)\s*(;|$)/i.test(disposition);
}
