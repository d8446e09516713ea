// The nodes that may serve a model: those that list it, and those whose listing is not known yet
// (presumed to have it, as capacity/model-fit.ts `residencyOf` and the model filter presume), in
// config order. Worked out once per views array and model, so the request path's questions about a
// model (prompt sizing, the name a node serves it under) read the few nodes that offer it instead of
// scanning the whole fleet on every request (issue 42: 1,000 nodes × 50 models). Any superset in
// config order gives the same answers (a node outside it has the model absent), so a holder without
// one may hand every view instead.

import type { NodeView } from './node.ts';

/** Models remembered per views array; past it the memory starts over (clients may name any model). */
export const MODEL_OFFERS_MAX_MODELS = 1024;

export class ModelOffers {
  #views: readonly NodeView[] | undefined;
  readonly #byModel = new Map<string, readonly NodeView[]>();

  /** The views of `views` that may serve `model`, the same array for as long as `views` is. */
  of(views: readonly NodeView[], model: string): readonly NodeView[] {
    if (views !== this.#views) {
      this.#views = views;
      this.#byModel.clear();
    }
    const known = this.#byModel.get(model);
    if (known !== undefined) return known;
    if (this.#byModel.size >= MODEL_OFFERS_MAX_MODELS) this.#byModel.clear();
    const offering = Object.freeze(views.filter((view) => view.discovery.phase === 'untried' || view.modelsById.has(model)));
    this.#byModel.set(model, offering);
    return offering;
  }
}
