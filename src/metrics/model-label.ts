// Model ids as metric label values. Nodes choose their model ids (any length, any number) and every
// distinct label value is one more time series in every scrape, so each model label is bounded in
// length (a long id keeps a prefix plus a hash of the whole, so distinct ids stay distinct) and in
// number (past MAX_MODEL_LABELS distinct values, further ids share the label `_other`).

import { createHash } from 'node:crypto';
import { cutTo } from '#src/discovery/index.ts';

/** Longest model label value, in UTF-16 units. */
export const MAX_LABEL_CHARS = 128;
/** Distinct model label values at most (configured models and the reserved labels not counted). */
export const MAX_MODEL_LABELS = 256;
/** The label of every model id past MAX_MODEL_LABELS. */
export const OTHER_MODEL_LABEL = '_other';
/** Labels the gateway itself uses; never counted against the cap. */
const RESERVED: ReadonlySet<string> = new Set([OTHER_MODEL_LABEL, '_unknown']);
/** Hex digits of the hash that keeps cut labels distinct. */
const HASH_CHARS = 12;

/** Pure: `value` when short enough, else its prefix, "~" and a hash of the whole value. */
export function boundedLabel(value: string, maxChars = MAX_LABEL_CHARS): string {
  if (value.length <= maxChars) return value;
  const hash = createHash('sha256').update(value).digest('hex').slice(0, HASH_CHARS);
  return `${cutTo(value, Math.max(0, maxChars - HASH_CHARS - 1), '')}~${hash}`;
}

export interface ModelLabelsOptions {
  /** Ids that always get their own label (the configured models): the operator bounds them. */
  readonly isPinned: (model: string) => boolean;
  readonly maxLabels?: number;
}

/**
 * The one way a model id becomes a label value. Labels are handed out first come, first served and
 * never taken back (a series, once exported, stays until restart), so the set only grows to its cap.
 */
export class ModelLabels {
  readonly #given = new Set<string>();
  readonly #isPinned: (model: string) => boolean;
  readonly #maxLabels: number;

  constructor(options: ModelLabelsOptions) {
    this.#isPinned = options.isPinned;
    this.#maxLabels = options.maxLabels ?? MAX_MODEL_LABELS;
  }

  label(model: string): string {
    const label = boundedLabel(model);
    if (RESERVED.has(model) || this.#given.has(label) || this.#isPinned(model)) return label;
    if (this.#given.size >= this.#maxLabels) return OTHER_MODEL_LABEL;
    this.#given.add(label);
    return label;
  }
}
