// POST /v1/files as it streams in: the multipart form read by @fastify/busboy (loaded with the
// first upload), the `file` part written to a temporary file in the files directory as it comes
// — never held whole — and checked line by line on the way (batch-line.ts): bounded in bytes (the
// part stops at [batch] max_file_bytes: 413), lines ([batch] max_lines) and line length. Every bad
// line is reported with its number (the first MAX_LISTED in the answer's `errors`). A refused or
// broken upload leaves no file behind; a good one is renamed into place by the caller.

import { createRequire } from 'node:module';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Busboy as BusboyFactory } from '@fastify/busboy';
import { badRequest, bodyTooLarge, GatewayError } from '#src/core/errors.ts';
import { checkLine, isBlank, isProblem, type LineProblem } from './batch-line.ts';
import { LineSplitter } from './line-splitter.ts';

const load = createRequire(import.meta.url);
const Busboy = (...args: Parameters<typeof BusboyFactory>): ReturnType<typeof BusboyFactory> =>
  (load('@fastify/busboy') as typeof import('@fastify/busboy')).Busboy(...args);

/** How many bad lines an answer lists (all are counted). */
export const MAX_LISTED = 1_000;
/** How many are named in the error's message. */
const MAX_IN_MESSAGE = 10;

export interface UploadBounds {
  readonly maxFileBytes: number;
  readonly maxLines: number;
  readonly maxLineBytes: number;
}

export interface Uploaded {
  readonly purpose: string;
  readonly filename: string;
  readonly bytes: number;
  /** Lines holding a request (blank lines not counted). */
  readonly lines: number;
}

/** Reads the form into `tempPath`; the file stays there only when the upload is good. */
export async function receiveUpload(
  req: IncomingMessage,
  tempPath: string,
  bounds: UploadBounds,
): Promise<Uploaded | GatewayError> {
  const contentType = String(req.headers['content-type'] ?? '');
  if (!/^multipart\/form-data\b/i.test(contentType)) {
    req.resume();
    return badRequest('POST /v1/files takes multipart/form-data with a `file` part and `purpose` = "batch"', 'file');
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > bounds.maxFileBytes + 64 * 1024) {
    req.resume();
    return bodyTooLarge(bounds.maxFileBytes);
  }
  const outcome = await new Promise<Uploaded | GatewayError>((resolve) => {
    const fields: Record<string, string> = {};
    const state: { file?: Promise<FileOutcome>; problem?: GatewayError } = {};
    let parser: ReturnType<typeof Busboy>;
    try {
      parser = Busboy({
        headers: { ...req.headers, 'content-type': contentType },
        limits: { fileSize: bounds.maxFileBytes, files: 1, fields: 8, fieldSize: 4096, parts: 12 },
      });
    } catch (error) {
      req.resume();
      resolve(badRequest(`malformed multipart/form-data: ${(error as Error).message}`));
      return;
    }
    parser.on('field', (name: string, value: string) => {
      if (!Object.hasOwn(fields, name)) fields[name] = value;
    });
    parser.on('file', (name: string, stream: NodeJS.ReadableStream & { truncated?: boolean }, filename: string) => {
      if (name !== 'file' || state.file !== undefined) {
        stream.resume();
        return;
      }
      fields.filename = filename;
      state.file = writeChecked(stream, tempPath, bounds);
    });
    parser.on('error', (error: unknown) => {
      state.problem ??= badRequest(`malformed multipart/form-data: ${error instanceof Error ? error.message : String(error)}`);
      req.unpipe(parser);
      req.resume();
      void settle();
    });
    parser.on('finish', () => void settle());
    const settled = { done: false };
    const settle = async (): Promise<void> => {
      if (settled.done) return;
      settled.done = true;
      const file = await state.file;
      if (state.problem !== undefined) return resolve(state.problem);
      if (file === undefined) return resolve(badRequest('the form has no `file` part (the JSONL input)', 'file'));
      if (file instanceof GatewayError) return resolve(file);
      if (fields.purpose !== 'batch')
        return resolve(
          badRequest(
            `\`purpose\` must be "batch" (got ${JSON.stringify(fields.purpose ?? null)}): this gateway keeps batch input files only`,
            'purpose',
          ),
        );
      resolve({ purpose: 'batch', filename: fields.filename ?? 'input.jsonl', bytes: file.bytes, lines: file.lines });
    };
    req.pipe(parser);
  });
  if (outcome instanceof GatewayError) await rm(tempPath, { force: true });
  return outcome;
}

type FileOutcome = { readonly bytes: number; readonly lines: number } | GatewayError;

/** The file part to disk, each line checked as it passes. */
async function writeChecked(
  stream: NodeJS.ReadableStream & { truncated?: boolean },
  tempPath: string,
  bounds: UploadBounds,
): Promise<FileOutcome> {
  const problems: LineProblem[] = [];
  const seen = new Set<string>();
  const counted = { bytes: 0, requests: 0, bad: 0, tooMany: false };
  const splitter = new LineSplitter(bounds.maxLineBytes, ({ line, text }) => {
    if (text !== undefined && isBlank(text)) return;
    counted.requests += 1;
    if (counted.requests > bounds.maxLines) {
      counted.tooMany = true;
      return;
    }
    const checked =
      text === undefined
        ? { line, message: `line ${line}: longer than ${bounds.maxLineBytes} bytes` }
        : checkLine(text, line, seen);
    if (!isProblem(checked)) return;
    counted.bad += 1;
    if (problems.length < MAX_LISTED) problems.push(checked);
  });
  const check = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      counted.bytes += chunk.length;
      splitter.push(chunk);
      done(null, chunk);
    },
    flush(done) {
      splitter.end();
      done();
    },
  });
  try {
    await pipeline(stream, check, createWriteStream(tempPath, { mode: 0o600 }));
  } catch (error) {
    return badRequest(`the upload broke off: ${error instanceof Error ? error.message : String(error)}`, 'file');
  }
  if (stream.truncated === true) return bodyTooLarge(bounds.maxFileBytes);
  if (counted.tooMany)
    return badRequest(`the file has ${counted.requests} requests, more than [batch] max_lines = ${bounds.maxLines}`, 'file');
  if (counted.requests === 0) return badRequest('the file holds no request (one JSON object per line)', 'file');
  if (counted.bad > 0) return invalidLines(problems, counted.bad);
  return { bytes: counted.bytes, lines: counted.requests };
}

/** 400 naming the bad lines: the first few in the message, up to MAX_LISTED in `errors`. */
export function invalidLines(problems: readonly LineProblem[], bad: number): GatewayError {
  const named = problems.slice(0, MAX_IN_MESSAGE).map((p) => p.message);
  const more = bad > named.length ? `; and ${bad - named.length} more` : '';
  return new GatewayError('GW_BAD_REQUEST', `the file has ${bad} invalid line(s): ${named.join('; ')}${more}`, {
    status: 400,
    openaiType: 'invalid_request_error',
    param: 'file',
    openaiCode: 'invalid_file',
    details: {
      errors: { object: 'list', data: problems.map((p) => ({ code: 'invalid_line', line: p.line, message: p.message })) },
    },
  });
}
