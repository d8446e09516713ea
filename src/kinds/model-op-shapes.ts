// The shapes of a kind's model operations (model-ops.ts): the POST that asks, how its answer reads,
// and the GET that confirms. Types only.

export type ModelAction = 'load' | 'unload';

/** A model's state as a confirming answer shows it. */
export type ObservedModelState = 'loaded' | 'loading' | 'unloaded' | 'failed';

export interface ModelOpRequest {
  readonly path: string;
  readonly body: Readonly<Record<string, unknown>>;
}

/** How the node answered the POST: accepted (confirm next), already so (nothing to confirm), or refused. */
export type ModelOpAnswer =
  { readonly kind: 'accepted' } | { readonly kind: 'already' } | { readonly kind: 'refused'; readonly reason: string };

export interface ModelOps {
  request(action: ModelAction, model: string): ModelOpRequest;
  /** The POST's answer read (status, parsed JSON body or undefined). Pure. */
  answer(action: ModelAction, status: number, body: unknown): ModelOpAnswer;
  /** The GET whose answer confirms the action (it never loads a model). */
  readonly confirmPath: string;
  /** The model's state in that answer; undefined = unreadable. Pure. */
  observe(body: unknown, model: string): ObservedModelState | undefined;
}
