// Pure: GET /admin/hosts → the `switchyard status` table, one line per node, and the exit code a
// script or cron job reads (0 all nodes alive, 1 some node dead, 3 a report this CLI cannot vouch
// for). Every string in the report is the gateway's (and, behind it, each node's) to choose: each
// cell is made visible (no control character reaches the terminal) before it is printed.

import type { HostsReport, HostView } from '#src/admin/index.ts';
import { visibleText } from '#src/core/visible-text.js';

export const STATUS_OK = 0;
export const STATUS_NODE_DEAD = 1;
/** The gateway did not answer, or answered something other than its hosts report. */
export const STATUS_GATEWAY_DOWN = 3;

const COLUMNS = ['NODE', 'KIND', 'HEALTH', 'DISCOVERY', 'LOADED/ON-DEMAND', 'CTX', 'SLOTS', 'QUEUE', 'LAST ERROR'] as const;
/** A last error is cut to this many characters, so one node stays one line. */
const MAX_ERROR_CHARS = 60;
/** Any other cell (a node name, a kind) is cut here: a hostile gateway cannot push the table off the screen. */
const MAX_CELL_CHARS = 80;

/** The health words a gateway reports (src/nodes/health/health-state.ts). */
export const KNOWN_HEALTH: ReadonlySet<string> = new Set(['unknown', 'healthy', 'degraded', 'dead', 'asleep']);
/** The discovery words (src/discovery/discovery-state.ts). */
export const KNOWN_DISCOVERY: ReadonlySet<string> = new Set(['untried', 'known', 'known_empty', 'degraded', 'expired']);

/**
 * What is wrong with the report's status words, one line per node: a word this CLI does not know
 * is not a state it can judge (a newer gateway, or something posing as one), so the exit is not 0.
 */
export function unknownStatuses(report: HostsReport): string[] {
  const problems: string[] = [];
  for (const host of report.hosts) {
    if (!KNOWN_HEALTH.has(host.health.status))
      problems.push(`node ${cell(host.name)}: unknown health status '${cell(host.health.status)}'`);
    if (!KNOWN_DISCOVERY.has(host.discovery.state))
      problems.push(`node ${cell(host.name)}: unknown discovery state '${cell(host.discovery.state)}'`);
  }
  return problems;
}

export function statusExitCode(report: HostsReport): number {
  if (unknownStatuses(report).length > 0) return STATUS_GATEWAY_DOWN;
  return report.hosts.some((h) => h.health.status === 'dead') ? STATUS_NODE_DEAD : STATUS_OK;
}

/** One printed cell: every control character visible, cut to one line. */
function cell(text: string): string {
  return visibleText(text.length > MAX_CELL_CHARS ? `${text.slice(0, MAX_CELL_CHARS - 1)}…` : text);
}

/** The table's lines (header first), columns padded to their widest cell. */
export function statusTable(report: HostsReport): string[] {
  const rows = report.hosts.map((host) => statusRow(host, report.queue_depth));
  const widths = COLUMNS.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(COLUMNS), ...rows.map(line)];
}

/** One summary line: how many nodes, how many healthy, dead, and requests waiting. */
export function statusSummary(report: HostsReport): string {
  const count = (status: string): number => report.hosts.filter((h) => h.health.status === status).length;
  const waiting = Object.values(report.queue_depth).reduce((sum, n) => sum + n, 0);
  const nodes = report.hosts.length;
  return `${nodes} node${nodes === 1 ? '' : 's'}: ${count('healthy')} healthy, ${count('degraded')} degraded, ${count('dead')} dead; ${waiting} request${waiting === 1 ? '' : 's'} queued`;
}

function statusRow(host: HostView, queueDepth: Readonly<Record<string, number>>): string[] {
  const figures = Object.values(host.models);
  const inUse = Object.values(host.leases).reduce((sum, usage) => sum + usage.requests, 0);
  const slotCounts = figures.map((f) => f.slots);
  const slots =
    slotCounts.length === 0 || slotCounts.some((s) => s === null)
      ? '?'
      : String(slotCounts.reduce<number>((sum, s) => sum + (s ?? 0), 0));
  const served = [...host.loaded, ...host.available_on_demand.map((m) => m.id)];
  const queued = served.reduce((sum, model) => sum + (queueDepth[model] ?? 0), 0);
  const health = host.wake?.waking === true ? `${host.health.status} (waking)` : host.health.status;
  return [
    cell(host.name),
    cell(host.kind),
    cell(health),
    cell(host.discovery.state),
    `${host.loaded.length}/${host.available_on_demand.length}`,
    contextRange(figures.map((f) => f.n_ctx)),
    `${inUse}/${slots}`,
    String(queued),
    lastError(host),
  ];
}

/** One figure, or the smallest and largest when loaded models differ; `-` when none is known. */
function contextRange(contexts: readonly number[]): string {
  if (contexts.length === 0) return '-';
  const low = Math.min(...contexts);
  const high = Math.max(...contexts);
  return low === high ? String(low) : `${low}-${high}`;
}

function lastError(host: HostView): string {
  const error = host.health.last_error ?? host.discovery.last_error;
  if (error === null) return '';
  const oneLine = error.replace(/\s+/g, ' ').trim();
  return visibleText(oneLine.length > MAX_ERROR_CHARS ? `${oneLine.slice(0, MAX_ERROR_CHARS - 1).trimEnd()}…` : oneLine);
}

/** The router statuses that need no note: a model loaded, loading or unloaded is what the counts say. */
const PLAIN_STATUSES: ReadonlySet<string> = new Set(['loaded', 'loading', 'unloaded']);

/**
 * One line per listed model whose router status says more than loaded or not (docs/protocols.md
 * "Pushed model state"): sleeping, downloading (with progress), downloaded, failed (with its exit
 * code), or a status value this gateway does not know — with why routing holds it back, if it does.
 */
export function modelNotes(report: HostsReport): string[] {
  const notes: string[] = [];
  for (const host of report.hosts) {
    for (const model of host.available_on_demand) {
      // The report is the gateway's to write: a row not shaped as this CLI knows it is left out.
      if (typeof model.id !== 'string' || typeof model.status !== 'string') continue;
      if (PLAIN_STATUSES.has(model.status) && model.held === undefined && model.unknown_status !== true) continue;
      const parts = [`${cell(host.name)}: ${cell(model.id)} ${cell(model.status)}`];
      if (typeof model.exit_code === 'number') parts.push(`(exit code ${model.exit_code})`);
      const fraction = model.progress?.fraction;
      if (typeof fraction === 'number') parts.push(`${Math.floor(fraction * 100)}%`);
      if (model.unknown_status === true) parts.push('(a status this gateway does not know; kept, routed as on demand)');
      if (typeof model.held === 'string') parts.push(`— not routed: ${cell(model.held)}`);
      notes.push(parts.join(' '));
    }
  }
  return notes;
}

/**
 * One line per llama-server router node: who holds the requests that wait for its model switches (the
 * router's own queue or the gateway's) and why, as /admin/hosts `switch_queue` says (docs/protocols.md §7.z5).
 */
export function switchQueueNotes(report: HostsReport): string[] {
  const notes: string[] = [];
  for (const host of report.hosts) {
    const queue: unknown = host.switch_queue;
    // The report is the gateway's to write: a row not shaped as this CLI knows it is left out.
    if (typeof queue !== 'object' || queue === null) continue;
    const { holder, reason } = queue as { holder?: unknown; reason?: unknown };
    if (typeof holder !== 'string' || typeof reason !== 'string') continue;
    notes.push(`${cell(host.name)}: switch queue held by the ${cell(holder)} — ${cell(reason)}`);
  }
  return notes;
}
