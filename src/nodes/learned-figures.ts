// Per model, a figure a node's answers teach (its bytes per prompt token, its decode rate): the one
// every answer moves, and the one its view shows, published only when it changed enough (so views
// stay cached). Part of the registry's record of a node (node-runtime.ts), written only through
// `learn`; capacity/ gives the pure rules (how one answer moves a figure, what change is worth a new
// view: token-ratio.ts, decode-rate.ts).

/** The pure rules for one kind of learned figure. */
export interface LearningRule<Figure, Sample> {
  /** Models learned at most per node (a node lists a bounded number; this bounds the rest). */
  readonly maxModels: number;
  /** The figure after one more answer; `prior` itself for an answer that teaches nothing. */
  readonly observe: (prior: Figure | undefined, sample: Sample, nowMs: number) => Figure | undefined;
  /** Whether `next` differs enough from the published figure to publish it. */
  readonly changed: (published: Figure | undefined, next: Figure) => boolean;
}

/** What a node that has taught nothing publishes: one object for every node (most nodes of a large fleet). */
const NOTHING: Readonly<Record<string, never>> = Object.freeze({});

export class LearnedFigures<Figure, Sample> {
  readonly #rule: LearningRule<Figure, Sample>;
  /** Made by the first answer that teaches something: a node that never answers keeps none (two a node, 1,000s of nodes). */
  #learned: Map<string, Figure> | undefined;
  #published: Readonly<Record<string, Figure>> = NOTHING;

  constructor(rule: LearningRule<Figure, Sample>) {
    this.#rule = rule;
  }

  /** The figures as last published: the same object until one changes (what the view shows). */
  get published(): Readonly<Record<string, Figure>> {
    return this.#published;
  }

  /** Learns one answer for `model`; true when the published figure changed (the view must be rebuilt). */
  learn(model: string, sample: Sample, nowMs: number): boolean {
    const prior = this.#learned?.get(model);
    if (prior === undefined && (this.#learned?.size ?? 0) >= this.#rule.maxModels) return false;
    const next = this.#rule.observe(prior, sample, nowMs);
    if (next === undefined || next === prior) return false;
    this.#learned ??= new Map<string, Figure>();
    this.#learned.set(model, next);
    if (!this.#rule.changed(this.#published[model], next)) return false;
    this.#published = { ...this.#published, [model]: next };
    return true;
  }
}
