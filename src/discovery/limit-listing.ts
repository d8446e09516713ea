// Pure: which entries of one node's listing the gateway takes, and what each limit left out. A node
// chooses its listing, so it is bounded before anything (routing, capacity polls, metrics, logs)
// sees it: ids past a byte length are dropped, then ids outside the node's allow-list, then at most
// `maxModels` entries are kept.

import type { DiscoveredModel } from './discovered-model.ts';
import { sampleIds } from './id-sample.ts';
import { isAllowedModel } from './model-glob.ts';

export type ListingLimit = 'id_too_long' | 'not_allowed' | 'too_many_models';

export interface ListingRules {
  /** Entries kept at most. */
  readonly maxModels: number;
  /** Longest id (and alias) taken, in UTF-8 bytes. */
  readonly maxIdBytes: number;
  /** The node's allow-list (`[[nodes]] models`); absent = any model. */
  readonly allowed?: readonly string[] | undefined;
}

/** What one limit left out of a listing: how many entries, and a few of their ids (cut short). */
export interface ListingDrop {
  readonly limit: ListingLimit;
  readonly count: number;
  readonly sample: readonly string[];
}

export interface LimitedListing {
  /** The entries kept, in listing order. */
  readonly models: readonly DiscoveredModel[];
  /** One entry per limit that left something out; empty when the listing was taken whole. */
  readonly dropped: readonly ListingDrop[];
}

export function limitListing(listing: readonly DiscoveredModel[], rules: ListingRules): LimitedListing {
  const dropped: ListingDrop[] = [];
  const tooLong: string[] = [];
  const notAllowed: string[] = [];
  const fitting: DiscoveredModel[] = [];
  for (const model of listing) {
    if (isTooLong(model.id, rules.maxIdBytes)) tooLong.push(model.id);
    else if (!isAllowedModel(rules.allowed, model.id)) notAllowed.push(model.id);
    else fitting.push(withShortAliases(model, rules.maxIdBytes));
  }
  if (tooLong.length > 0) dropped.push(dropOf('id_too_long', tooLong));
  if (notAllowed.length > 0) dropped.push(dropOf('not_allowed', notAllowed));
  if (fitting.length <= rules.maxModels) return { models: fitting, dropped };
  const kept = keptIds(fitting, rules.maxModels);
  const models = fitting.filter((model) => kept.has(model.id));
  dropped.push(
    dropOf(
      'too_many_models',
      fitting.filter((model) => !kept.has(model.id)).map((model) => model.id),
    ),
  );
  return { models, dropped };
}

/**
 * The ids kept past the count limit: loaded entries first (they answer at once), then by id, so a
 * node that merely reorders its listing keeps the same set and causes no churn.
 */
function keptIds(models: readonly DiscoveredModel[], maxModels: number): Set<string> {
  const loaded: string[] = [];
  const unloaded: string[] = [];
  for (const model of models) (model.loaded ? loaded : unloaded).push(model.id);
  // The default sort compares UTF-16 code units, and is several times faster than a comparator.
  const kept = loaded.sort().slice(0, Math.max(0, maxModels));
  if (kept.length < maxModels) kept.push(...unloaded.sort().slice(0, maxModels - kept.length));
  return new Set(kept);
}

function isTooLong(id: string, maxBytes: number): boolean {
  // A UTF-16 unit is at most 3 UTF-8 bytes: skip the byte count for clearly short ids.
  return id.length * 3 > maxBytes && Buffer.byteLength(id, 'utf8') > maxBytes;
}

function withShortAliases(model: DiscoveredModel, maxIdBytes: number): DiscoveredModel {
  if (!model.aliases.some((alias) => isTooLong(alias, maxIdBytes))) return model;
  return { ...model, aliases: model.aliases.filter((alias) => !isTooLong(alias, maxIdBytes)) };
}

function dropOf(limit: ListingLimit, ids: readonly string[]): ListingDrop {
  return { limit, count: ids.length, sample: sampleIds(ids) };
}

/**
 * The drops worth a log line: a limit that newly applies, or applies to a different number of
 * entries than in the previous listing. A node whose listing stays over a limit logs once, not
 * once per poll; one whose listing keeps changing logs once per change, each line bounded.
 */
export function changedDrops(prev: readonly ListingDrop[], next: readonly ListingDrop[]): ListingDrop[] {
  if (prev === next) return [];
  return next.filter((drop) => prev.find((before) => before.limit === drop.limit)?.count !== drop.count);
}
