// POST /v1/batches: the ask checked (pure: `checkBatchAsk`) in the POST, which answers the job
// `validating`; then — the runner's validation (batch-runner.ts) — the job's lines read from its
// input file (each checked again, and each line's `url` must be the job's endpoint): a job whose
// lines all run goes `in_progress` with them; one with any bad line is `failed`, each problem with
// its line number in `errors` (OpenAI's shape), and runs nothing.

import { badRequest, GatewayError } from '#src/core/errors.ts';
import { isRecord } from '#src/core/is-record.ts';
import { checkLine, isBlank, isProblem, isBatchEndpoint, BATCH_ENDPOINTS, type BatchEndpoint } from './batch-line.ts';
import { completionWindowMs } from './batch-lifecycle.ts';
import type { BatchProblem } from './batch-rows.ts';
import type { NewLine } from './batch-store.ts';
import type { BatchFiles } from './batch-files.ts';
import { LineSplitter } from './line-splitter.ts';
import { MAX_LISTED } from './file-upload.ts';

/** OpenAI's metadata bounds: 16 pairs, keys up to 64 characters, values up to 512. */
const MAX_METADATA_PAIRS = 16;

export interface BatchAsk {
  readonly inputFileId: string;
  readonly endpoint: BatchEndpoint;
  readonly completionWindow: string;
  readonly windowMs: number;
  readonly metadata: Readonly<Record<string, string>> | null;
}

/** The create body, checked: the ask, or a 400 naming the field. */
export function checkBatchAsk(body: unknown): BatchAsk | GatewayError {
  if (!isRecord(body)) return badRequest('the body must be a JSON object');
  const { input_file_id: inputFileId, endpoint, completion_window: window, metadata } = body;
  if (typeof inputFileId !== 'string' || inputFileId === '')
    return badRequest('`input_file_id` must be a file id', 'input_file_id');
  if (!isBatchEndpoint(endpoint)) return badRequest(`\`endpoint\` must be one of ${BATCH_ENDPOINTS.join(', ')}`, 'endpoint');
  const windowMs = completionWindowMs(window ?? '24h');
  if (windowMs === undefined)
    return badRequest(
      '`completion_window` must be a duration like "24h" (minutes, hours or days, at most 30d)',
      'completion_window',
    );
  const meta = checkMetadata(metadata);
  if (meta instanceof GatewayError) return meta;
  return { inputFileId, endpoint, completionWindow: String(window ?? '24h'), windowMs, metadata: meta };
}

function checkMetadata(metadata: unknown): Readonly<Record<string, string>> | null | GatewayError {
  if (metadata === undefined || metadata === null) return null;
  const wrong = badRequest(
    `\`metadata\` must be an object of at most ${MAX_METADATA_PAIRS} string values (keys up to 64 characters, values up to 512)`,
    'metadata',
  );
  if (!isRecord(metadata)) return wrong;
  const entries = Object.entries(metadata);
  if (entries.length > MAX_METADATA_PAIRS) return wrong;
  for (const [key, value] of entries) if (key.length > 64 || typeof value !== 'string' || value.length > 512) return wrong;
  return Object.fromEntries(entries) as Record<string, string>;
}

/** The job's lines from its input file, or every problem (with its line number). */
export async function readJobLines(
  files: BatchFiles,
  fileId: string,
  endpoint: BatchEndpoint,
  maxLineBytes: number,
): Promise<{ lines: NewLine[]; problems: BatchProblem[] }> {
  const lines: NewLine[] = [];
  const problems: BatchProblem[] = [];
  const seen = new Set<string>();
  const problem = (line: number, code: string, message: string): void => {
    if (problems.length < MAX_LISTED) problems.push({ code, message, param: null, line });
  };
  const splitter = new LineSplitter(maxLineBytes, ({ line, text }) => {
    if (text === undefined) return problem(line, 'invalid_line', `line ${line}: longer than ${maxLineBytes} bytes`);
    if (isBlank(text)) return;
    const checked = checkLine(text, line, seen);
    if (isProblem(checked)) return problem(line, 'invalid_line', checked.message);
    if (checked.url !== endpoint)
      return problem(line, 'mismatched_endpoint', `line ${line}: \`url\` ${checked.url} is not the batch's endpoint ${endpoint}`);
    lines.push({ lineNo: line, customId: checked.customId, model: checked.model, body: checked.body });
  });
  for await (const chunk of files.read(fileId)) splitter.push(chunk as Buffer);
  splitter.end();
  if (lines.length === 0 && problems.length === 0)
    problems.push({ code: 'empty_file', message: 'the input file holds no request', line: null });
  return { lines, problems };
}
