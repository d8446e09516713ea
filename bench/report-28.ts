// The markdown of issue 28's own rows (after the main report): the fast CLI and lean process, and
// the open-loop tails with polls running / paused. The targets themselves are in the main table.

import type { BenchReport } from './report.ts';
import { round } from './stats.ts';

const fmt = (value: number | undefined): string => (value === undefined || Number.isNaN(value) ? '—' : String(round(value)));

/** The accept queues the streams row ran with: what the gateway asked, what the kernel allowed. */
function queues(s: NonNullable<BenchReport['streams']>): string {
  const q = s.acceptQueues;
  return (
    `listen_backlog ${s.listenBacklog}` +
    (q === undefined ? '' : `, somaxconn ${q.somaxconn}, tcp_max_syn_backlog ${q.synBacklog}`)
  );
}

export function renderIssue28(r: BenchReport): string {
  const out: string[] = [];
  const lean = r.lean;
  if (lean !== undefined) {
    out.push('', '## Lean process and CLI start (spawn → exit, median of 5)', '');
    out.push('| command | median ms | max ms | peak RSS MB |', '|---|---:|---:|---:|');
    for (const row of lean.cli) out.push(`| ${row.command} | ${fmt(row.medianMs)} | ${fmt(row.maxMs)} | ${fmt(row.peakRssMB)} |`);
    out.push(
      '',
      `\`serve\` with 10 nodes: spawn → listening ${fmt(lean.serveReadyMs)} ms (median). Idle \`serve\`, one node, no [mesh], 3 s after it listens: ${fmt(lean.idleServeRssMB)} MB RSS.`,
    );
  }
  const tails = r.tails;
  if (tails !== undefined) {
    out.push('', `## Tails: JSON at a fixed rate (open-loop), ${tails.nodes} nodes polled`, '');
    out.push(
      '| target | rate req/s | sent | p50 ms | p99 ms | p99.9 ms | added p99 ms | p50 first → last fifth ms | loop delay p99 / max ms | GC pauses ms (n, longest; by kind: n ≤ longest) | gateway CPU % | fleet CPU % | errors |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const row of tails.rows) {
      const label = row.polls === 'direct' || row.polls === 'bare' ? row.polls : `switchyard, polls ${row.polls}`;
      const byKind = Object.entries(row.gcByKind ?? {})
        .map(([kind, k]) => `${kind} ${k.n} ≤ ${fmt(k.max)}`)
        .join(', ');
      const gc =
        row.gcPauseMs === undefined
          ? '—'
          : `${fmt(row.gcPauseMs)} (${row.gcCount}, ${fmt(row.gcMaxPauseMs)}${byKind === '' ? '' : `; ${byKind}`})`;
      const trend = `${fmt(row.firstFifthP50Ms)} → ${fmt(row.lastFifthP50Ms)}`;
      const loop = row.loopDelayP99Ms === undefined ? '—' : `${fmt(row.loopDelayP99Ms)} / ${fmt(row.loopDelayMaxMs)}`;
      out.push(
        `| ${label} | ${row.rate} | ${row.sent} | ${fmt(row.p50Ms)} | ${fmt(row.p99Ms)} | ${fmt(row.p999Ms)} | ${row.polls === 'direct' ? '—' : fmt(row.addedP99Ms)} | ${trend} | ${loop} | ${gc} | ${fmt(row.gatewayCpuPercent)} | ${fmt(row.fleetCpuPercent)} | ${row.errors} |`,
      );
    }
  }
  if (tails !== undefined && tails.sequential !== undefined && tails.sequential.length > 0) {
    out.push('', 'c=1, closed-loop, one keep-alive connection (performance.now(): µs resolution):', '');
    out.push(
      '| target | requests | p50 ms | p99 ms | p99.9 ms | added p50 ms | added p99 ms | GC pauses ms (longest) |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const row of tails.sequential) {
      const label = row.target === 'direct' || row.target === 'bare' ? row.target : `switchyard, polls ${row.target}`;
      const gc = row.gcPauseMs === undefined ? '—' : `${fmt(row.gcPauseMs)} (${fmt(row.gcMaxPauseMs)})`;
      out.push(
        `| ${label} | ${row.requests} | ${fmt(row.p50Ms)} | ${fmt(row.p99Ms)} | ${fmt(row.p999Ms)} | ${fmt(row.addedP50Ms)} | ${fmt(row.addedP99Ms)} | ${gc} |`,
      );
    }
  }
  const streams = r.streams;
  if (streams !== undefined) {
    out.push(
      '',
      `## Streams: ${streams.streams} concurrent SSE streams, ${streams.tokens} tokens each at ${1000 / streams.intervalMs}/s, opened at ${streams.openRate}/s (RLIMIT_NOFILE ${streams.fileLimit}; ${queues(streams)})`,
      '',
    );
    out.push(
      '| target | complete | broken | max open | event trip p50 / p99 / p99.9 ms | gap p50 ms | gap p99 ms | gap p99.9 ms | RSS idle → at N MB | KB per stream | gateway CPU % | upstream CPU % | client CPU % | client loop p99 ms | broken by | TCP counters moved |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
    );
    for (const row of streams.rows) {
      const rss = row.gatewayIdleRssMB === undefined ? '—' : `${fmt(row.gatewayIdleRssMB)} → ${fmt(row.gatewayRssAtNMB)}`;
      out.push(
        `| ${row.target} | ${row.complete} | ${row.broken} | ${row.maxOpen} | ${fmt(row.tripP50Ms)} / ${fmt(row.tripP99Ms)} / ${fmt(row.tripP999Ms)} | ${fmt(row.gapP50Ms)} | ${fmt(row.gapP99Ms)} | ${fmt(row.gapP999Ms)} | ${rss} | ${fmt(row.rssPerStreamKB)} | ${fmt(row.gatewayCpuPercent)} | ${fmt(row.upstreamCpuPercent)} | ${fmt(row.clientCpuPercent)} | ${fmt(row.clientLoopDelayP99Ms)} | ${kinds(row.errors)} | ${kinds(row.tcp)} |`,
      );
    }
  }
  return out.length === 0 ? '' : `${out.join('\n')}\n`;
}

/** `a 3, b 1`, or — when empty. */
function kinds(counts: Readonly<Record<string, number | undefined>>): string {
  const entries = Object.entries(counts);
  return entries.length === 0 ? '—' : entries.map(([k, n]) => `${k} ${n}`).join(', ');
}
