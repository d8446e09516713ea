// `switchyard models [--url GATEWAY] [--token T]`: per model, where it is loaded, where it would load
// on demand, its desired state and failed loads (GET /admin/models). `switchyard models load|unload
// MODEL [--node N] [--evict-warm]`: POST /admin/models/load|unload, printing what was done or why
// not (a load the reconciler would undo is refused naming the warm model; --evict-warm loads it
// anyway and the gateway holds it for [models] operator_hold). Exit 0 done
// (or already so), 1 refused or failed, 3 gateway unreachable or refusing the token, 2 usage error.
// Every string the gateway sent is printed made visible.

import { requestBoundedJson } from '#src/core/bounded-json.ts';
import { httpRequester } from './http-requester.ts';
import { isRecord } from '#src/core/is-record.ts';
import { visibleText } from '#src/core/visible-text.js';
import { flagValue, type CliIo, type Command } from './io.ts';
import { DEFAULT_STATUS_URL, findStatusTarget } from './status-target.ts';
import { adminAnswerProblem, gatewayErrorMessage, STATUS_MAX_BYTES } from './status-report.ts';

const USAGE = `usage: switchyard models [--url GATEWAY] [--token T] [--config FILE]
       switchyard models load MODEL [--node N] [--evict-warm] [--url GATEWAY] [--token T]
       switchyard models unload MODEL --node N [--evict-warm] [--url GATEWAY] [--token T]

  --url, --config, --token   as for switchyard status
  --node N                   the node (required for unload; a load without it picks the node)
  --evict-warm               act even where the reconciler would undo it for a warm model: a load
                             that takes a warm model's slot, an unload of a warm model it would
                             load there again; held for [models] operator_hold (default 10m)

exit: 0 done or already so, 1 refused or failed, 3 gateway down or refusing the token, 2 usage error
`;

/** A load waits for the node to confirm (up to the gateway's routing.load_timeout). */
const ACTION_TIMEOUT_MS = 10 * 60_000;
const VIEW_TIMEOUT_MS = 5_000;

/** A flag that takes no value. */
const isSwitch = (arg: string): boolean => arg === '--evict-warm';

function positionals(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg.startsWith('--')) {
      if (!arg.includes('=') && !isSwitch(arg)) i++;
      continue;
    }
    out.push(arg);
  }
  return out;
}

const text = (value: unknown): string => visibleText(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));

function columns(rows: readonly string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return (
    rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')).join('\n') + '\n'
  );
}

const list = (v: unknown): string => (Array.isArray(v) && v.length > 0 ? v.map(text).join(',') : '-');

/** Desired against observed: `ok`, `short` (fewer warm copies than wanted, or a preload pending), or `-` without a desired state. */
function stateOf(row: Record<string, unknown>, d: Record<string, unknown> | undefined): string {
  if (d === undefined || row.satisfied === undefined || row.satisfied === null) return '-';
  const warm = typeof d.warm === 'number' && d.warm > 0 ? ` (warm ${text(row.warm_now)}/${text(d.warm)})` : '';
  return `${row.satisfied === true ? 'ok' : 'short'}${warm}`;
}

function modelsTable(body: unknown): string | undefined {
  if (!isRecord(body) || !Array.isArray(body.models)) return undefined;
  const rows = [['MODEL', 'LOADED ON', 'ON DEMAND', 'DESIRED', 'STATE', 'NEXT', 'HELD BY OPERATOR', 'FAILED LOADS']];
  for (const row of body.models) {
    if (!isRecord(row)) continue;
    const d = isRecord(row.desired) ? row.desired : undefined;
    const desired =
      d === undefined
        ? '-'
        : [
            d.pin === true ? 'pin' : '',
            d.preload === true ? 'preload' : '',
            typeof d.warm === 'number' && d.warm > 0 ? `warm=${d.warm}` : '',
          ]
            .filter(Boolean)
            .join(' ') || '-';
    const next = Array.isArray(row.next)
      ? row.next
          .filter(isRecord)
          .map((s) => `${text(s.action)} on ${text(s.node)} (${text(s.why)})`)
          .join('; ')
      : '';
    const failures = Array.isArray(row.failures)
      ? row.failures
          .filter(isRecord)
          .map((f) => `${text(f.node)}: ${text(f.reason)}`)
          .join('; ')
      : '';
    const held = Array.isArray(row.held)
      ? row.held
          .filter(isRecord)
          .map(
            (h) =>
              `${h.state === 'unloaded' ? 'off ' : ''}${text(h.node)}${typeof h.replica === 'string' ? ` via ${text(h.replica)}` : ''} until ${text(h.until ?? `+${text(h.expires_in_ms)}ms`)}`,
          )
          .join('; ')
      : '';
    rows.push([
      text(row.model),
      list(row.loaded_on),
      list(row.on_demand),
      desired,
      stateOf(row, d),
      next || '-',
      held || '-',
      failures || '-',
    ]);
  }
  const nodes = [['NODE', 'LOADED', 'MAX', 'SWITCH UNDER WAY']];
  for (const node of Array.isArray(body.nodes) ? body.nodes.filter(isRecord) : []) {
    if (node.manages_models !== true) continue;
    const sw = isRecord(node.switch) ? node.switch : undefined;
    const under =
      sw === undefined
        ? '-'
        : `${text(sw.action)} ${text(sw.model)} for ${text(sw.by)}${typeof sw.victim === 'string' ? ` (unloading ${text(sw.victim)} first)` : ''}`;
    const unavailable = typeof node.unavailable === 'string' ? ` [${text(node.unavailable)}]` : '';
    nodes.push([
      `${text(node.name)}${unavailable}`,
      list(node.loaded),
      node.max_instances === null || node.max_instances === undefined ? '-' : text(node.max_instances),
      under,
    ]);
  }
  const r = isRecord(body.reconciler) ? body.reconciler : undefined;
  const lost =
    typeof r?.holds_lost === 'string'
      ? `\noperator holds: the cluster store is not read (${text(r.holds_lost)}); this replica keeps the holds it knows\n`
      : '';
  return columns(rows) + (nodes.length > 1 ? `\n${columns(nodes)}` : '') + lost;
}

export const runModels: Command = async (argv, io) => {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.stdout.write(USAGE);
    return 0;
  }
  const [action, model, ...extra] = positionals(argv);
  const node = flagValue(argv, 'node');
  if (action !== undefined && action !== 'load' && action !== 'unload')
    return usage(io, `unknown subcommand '${visibleText(action)}'`);
  if (action !== undefined && (model === undefined || model === '')) return usage(io, `models ${action} needs a MODEL`);
  if (extra.length > 0) return usage(io, `unexpected argument '${visibleText(extra[0] ?? '')}'`);
  if (action === 'unload' && node === undefined) return usage(io, 'models unload needs --node N');
  if (argv.some((a) => a.startsWith('--evict-warm='))) return usage(io, '--evict-warm takes no value');
  const evictWarm = argv.includes('--evict-warm');
  if (evictWarm && action === undefined) return usage(io, '--evict-warm applies to models load and unload');
  const given = flagValue(argv, 'url');
  const found = given === undefined ? await findStatusTarget(flagValue(argv, 'config'), io.env) : undefined;
  if (found?.ok === false) return usage(io, found.problem);
  const url = (given ?? (found?.ok === true ? found.target.url : DEFAULT_STATUS_URL)).replace(/\/+$/, '');
  const token =
    flagValue(argv, 'token') ?? io.env.SWITCHYARD_ADMIN_TOKEN ?? (found?.ok === true ? found.target.token : undefined);
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  const agent = httpRequester(VIEW_TIMEOUT_MS);
  const answer =
    action === undefined
      ? await requestBoundedJson(`${url}/admin/models`, {
          dispatcher: agent,
          headers,
          timeoutMs: VIEW_TIMEOUT_MS,
          maxBytes: STATUS_MAX_BYTES,
          signal: io.signal,
        })
      : await requestBoundedJson(`${url}/admin/models/${action}`, {
          dispatcher: agent,
          headers,
          method: 'POST',
          body: JSON.stringify({ model, ...(node === undefined ? {} : { node }), ...(evictWarm ? { evict_warm: true } : {}) }),
          timeoutMs: ACTION_TIMEOUT_MS,
          maxBytes: STATUS_MAX_BYTES,
          signal: io.signal,
        });
  const problem = adminAnswerProblem(answer);
  if (problem !== undefined || !answer.ok) return unreachable(io, url, problem ?? 'no answer');
  if (action === undefined) {
    const table = answer.status === 200 ? modelsTable(answer.body) : undefined;
    if (table === undefined)
      return unreachable(
        io,
        url,
        `HTTP ${answer.status}: ${gatewayErrorMessage(answer.body) ?? '/admin/models did not answer a models view'}`,
      );
    io.stdout.write(table);
    return 0;
  }
  const body = isRecord(answer.body) ? answer.body : {};
  const line = `${text(body.outcome ?? `HTTP ${answer.status}`)}: ${action} ${text(model)}${body.node === undefined || body.node === null ? '' : ` on ${text(body.node)}`}${body.evicted === undefined ? '' : ` (unloaded ${text(body.evicted)} first)`} — ${text(body.detail ?? (isRecord(body.error) ? body.error.message : ''))}\n`;
  const ok = body.outcome === 'done' || body.outcome === 'already';
  // The gateway's reason speaks of the API's field; the command's own switch is this.
  const hint =
    body.code === 'warm'
      ? `(switchyard models ${action} ${text(model)}${node === undefined ? '' : ` --node ${text(node)}`} --evict-warm does it anyway, held for [models] operator_hold)\n`
      : '';
  (ok ? io.stdout : io.stderr).write(line + hint);
  return ok ? 0 : 1;
};

function usage(io: CliIo, problem: string): number {
  io.stderr.write(`switchyard models: ${problem}\n\n${USAGE}`);
  return 2;
}

function unreachable(io: CliIo, url: string, problem: string): number {
  io.stderr.write(`switchyard models: ${visibleText(url)}: ${visibleText(problem)}\n`);
  return 3;
}
