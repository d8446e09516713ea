// Pure: the site's own model set from its sources' answers — merged, sorted by id, capped.
// A source answering "unknown" contributes its last-known-good list, so a bad discovery answer
// never clears what the site publishes.

import type { SourceModels } from './discovery-source.ts';
import type { SiteRecordModel } from './site-record.ts';

export interface SiteModelSet {
  /** At most `cap` models, sorted by id. */
  readonly models: readonly SiteRecordModel[];
  /** Models left out by the cap (0 = none). */
  readonly capped: number;
  /** Each source's list this round (its last-known-good one when it answered "unknown"). */
  readonly lastGood: ReadonlyMap<string, readonly SiteRecordModel[]>;
}

export function siteModelSet(
  answers: readonly { readonly source: string; readonly answer: SourceModels }[],
  lastGood: ReadonlyMap<string, readonly SiteRecordModel[]>,
  cap: number,
): SiteModelSet {
  const kept = new Map<string, readonly SiteRecordModel[]>();
  const merged = new Map<string, SiteRecordModel>();
  for (const { source, answer } of answers) {
    const list = answer.kind === 'list' ? answer.models : (lastGood.get(source) ?? []);
    kept.set(source, list);
    for (const model of list) merged.set(model.id, mergeModel(merged.get(model.id), model));
  }
  const sorted = [...merged.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const limit = Math.max(0, cap);
  return { models: sorted.slice(0, limit), capped: Math.max(0, sorted.length - limit), lastGood: kept };
}

/** Two sources naming one model: the larger context, and on demand only if both say so. */
function mergeModel(prior: SiteRecordModel | undefined, next: SiteRecordModel): SiteRecordModel {
  if (prior === undefined) return next;
  const ctx = Math.max(prior.ctx ?? 0, next.ctx ?? 0);
  const onDemand = prior.on_demand === true && next.on_demand === true;
  return { id: next.id, ...(ctx > 0 ? { ctx } : {}), ...(onDemand ? { on_demand: true } : {}) };
}

/** Whether two sets publish the same thing (ids, contexts, on-demand flags, in order). */
export function sameModels(a: readonly SiteRecordModel[], b: readonly SiteRecordModel[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((m, i) => {
    const o = b[i];
    return o !== undefined && m.id === o.id && m.ctx === o.ctx && (m.on_demand === true) === (o.on_demand === true);
  });
}
