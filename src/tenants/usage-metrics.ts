// The state file's writes ([server] state_dir): whether they work, how many failed in a row, the
// last one that committed, and the tenant usage counted and not yet in the file (kept in memory
// while writes fail). Read at scrape time; no labels. Alert on gateway_state_store_up == 0 or
// gateway_state_unsaved_tokens > 0 for longer than a few flush intervals.

import { Gauge, type Registry } from 'prom-client';
import type { UsageStoreReport } from './usage-health.ts';

/** The usage store's report now; undefined = no state_dir (no gauges). */
export type StateStoreFigures = () => UsageStoreReport | undefined;

export function registerStateMetrics(r: Registry, figures: StateStoreFigures): void {
  const gauge = (name: string, help: string, read: (report: UsageStoreReport) => number): void => {
    new Gauge({
      name,
      help,
      registers: [r],
      collect() {
        const report = figures();
        this.reset();
        if (report !== undefined) this.set(read(report));
      },
    });
  };
  gauge(
    'gateway_state_store_up',
    '1 while the state file ([server] state_dir) takes writes, 0 while they fail (usage is kept in memory and retried).',
    (s) => (s.status === 'ok' ? 1 : 0),
  );
  gauge('gateway_state_failed_writes', 'State file writes failed in a row (0 once one commits).', (s) => s.failed_writes);
  gauge(
    'gateway_state_unsaved_tokens',
    'Tenant tokens counted and not in the state file because its writes fail (lost if the gateway stops now).',
    (s) => s.unsaved.tokens,
  );
  gauge(
    'gateway_state_last_write_timestamp_seconds',
    "When the state file's last write committed (Unix seconds; 0 before the first).",
    (s) => (s.last_write_at === null ? 0 : Date.parse(s.last_write_at) / 1000),
  );
  gauge(
    'gateway_state_stale_at_start',
    '1 when the start found the state file older than the last write the gateway knew of (docs/tenants.md), else 0.',
    (s) => (s.stale === null ? 0 : 1),
  );
}
