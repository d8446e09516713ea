// This site's own model set, evaluated from its discovery sources on every check: keeps each
// source's last-known-good list across "unknown" answers, and tracks over-cap episodes so the cap
// is logged once per episode.

import type { DiscoverySource } from './discovery-source.ts';
import { siteModelSet } from './site-models.ts';
import type { SiteRecordModel } from './site-record.ts';

export interface OwnSetEvaluation {
  readonly models: readonly SiteRecordModel[];
  /** Models over the cap (0 = none). */
  readonly capped: number;
  /** This evaluation started an over-cap episode. */
  readonly capEpisodeStarted: boolean;
}

export class OwnModelSet {
  #sources: readonly DiscoverySource[];
  #lastGood: ReadonlyMap<string, readonly SiteRecordModel[]> = new Map();
  #overCap = false;
  #current: readonly SiteRecordModel[] = [];

  constructor(sources: readonly DiscoverySource[]) {
    this.#sources = sources;
  }

  evaluate(now: number, cap: number): OwnSetEvaluation {
    const answers = this.#sources.map((source) => ({ source: source.name, answer: safeAnswer(source, now) }));
    const set = siteModelSet(answers, this.#lastGood, cap);
    this.#lastGood = set.lastGood;
    const started = set.capped > 0 && !this.#overCap;
    this.#overCap = set.capped > 0;
    this.#current = set.models;
    return { models: set.models, capped: set.capped, capEpisodeStarted: started };
  }

  current(): readonly SiteRecordModel[] {
    return this.#current;
  }
}

/** A source that throws answers "unknown": its last-known-good list stays. */
function safeAnswer(source: DiscoverySource, now: number): ReturnType<DiscoverySource['models']> {
  try {
    return source.models(now);
  } catch (error) {
    return { kind: 'unknown', reason: error instanceof Error ? error.message : String(error) };
  }
}
