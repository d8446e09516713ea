// `switchyard batches [--url GATEWAY] [--token T] [--config FILE]`: every tenant's latest batch
// jobs (GET /admin/batches, served with [server] state_dir: docs/batch.md) — status, progress,
// failures, lines retried, waiting and in flight, the rate and the time left. Exit 0, 3 gateway
// unreachable, refusing the token or serving no batches, 2 usage error. Every string the gateway
// sent is printed made visible.

import { requestBoundedJson } from '#src/core/bounded-json.ts';
import { isRecord } from '#src/core/is-record.ts';
import { visibleText } from '#src/core/visible-text.js';
import { httpRequester } from './http-requester.ts';
import { flagValue, type CliIo, type Command } from './io.ts';
import { DEFAULT_STATUS_URL, findStatusTarget } from './status-target.ts';
import { adminAnswerProblem, gatewayErrorMessage, STATUS_MAX_BYTES } from './status-report.ts';

const USAGE = `usage: switchyard batches [--url GATEWAY] [--token T] [--config FILE]

  --url, --config, --token   as for switchyard status

exit: 0 listed, 3 gateway down, refusing the token or serving no batches ([server] state_dir), 2 usage error
`;

const VIEW_TIMEOUT_MS = 5_000;

const text = (value: unknown): string =>
  value === null || value === undefined ? '-' : visibleText(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));

/** The view as a table; undefined = not a batches view. */
export function batchesTable(body: unknown): string | undefined {
  if (!isRecord(body) || !Array.isArray(body.batches)) return undefined;
  const rows = [['BATCH', 'TENANT', 'STATUS', 'DONE', 'FAILED', 'RETRIED', 'WAITING', 'IN FLIGHT', 'LINES/S', 'ETA', 'CREATED']];
  for (const b of body.batches.filter(isRecord))
    rows.push([
      text(b.id),
      text(b.tenant),
      text(b.status),
      `${text(b.completed)}/${text(b.total)}`,
      text(b.failed),
      text(b.retried),
      text(b.waiting),
      text(b.in_flight),
      text(b.lines_per_second),
      typeof b.eta_seconds === 'number' ? `${b.eta_seconds}s` : '-',
      text(b.created_at),
    ]);
  if (rows.length === 1) return 'no batches\n';
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return (
    rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')).join('\n') + '\n'
  );
}

export const runBatches: Command = async (argv, io) => {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.stdout.write(USAGE);
    return 0;
  }
  const given = flagValue(argv, 'url');
  const found = given === undefined ? await findStatusTarget(flagValue(argv, 'config'), io.env) : undefined;
  if (found?.ok === false) return usage(io, found.problem);
  const url = (given ?? (found?.ok === true ? found.target.url : DEFAULT_STATUS_URL)).replace(/\/+$/, '');
  const token =
    flagValue(argv, 'token') ?? io.env.SWITCHYARD_ADMIN_TOKEN ?? (found?.ok === true ? found.target.token : undefined);
  const answer = await requestBoundedJson(`${url}/admin/batches`, {
    dispatcher: httpRequester(VIEW_TIMEOUT_MS),
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    timeoutMs: VIEW_TIMEOUT_MS,
    maxBytes: STATUS_MAX_BYTES,
    signal: io.signal,
  });
  const problem = adminAnswerProblem(answer);
  if (problem !== undefined || !answer.ok) return unreachable(io, url, problem ?? 'no answer');
  if (answer.status === 404)
    return unreachable(io, url, 'HTTP 404: this gateway serves no batches (set [server] state_dir: docs/batch.md)');
  const table = answer.status === 200 ? batchesTable(answer.body) : undefined;
  if (table === undefined)
    return unreachable(
      io,
      url,
      `HTTP ${answer.status}: ${gatewayErrorMessage(answer.body) ?? '/admin/batches did not answer a batches view'}`,
    );
  io.stdout.write(table);
  return 0;
};

function usage(io: CliIo, problem: string): number {
  io.stderr.write(`switchyard batches: ${problem}\n\n${USAGE}`);
  return 2;
}

function unreachable(io: CliIo, url: string, problem: string): number {
  io.stderr.write(`switchyard batches: ${visibleText(url)}: ${visibleText(problem)}\n`);
  return 3;
}
