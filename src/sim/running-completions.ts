// The completions a llama-server process is generating, by their OpenAI id (`oaicompat_cmpl_id`,
// the `chatcmpl-…` of every chunk), and `POST /v1/chat/completions/control` over them, as
// tools/server/server-context.cpp answers it (docs/protocols.md §7.z3): a missing `id` or an
// action other than `reasoning_end` is 400; otherwise 200 `{"success": …}`, with a `message` when
// no running completion has the id or the completion did not arm `reasoning_control`. One table
// per process: a router's children each have their own.

export interface ControlAnswer {
  readonly status: number;
  readonly body: Readonly<Record<string, unknown>>;
}

interface Running {
  readonly reasoningControl: boolean;
  ended: boolean;
}

export class RunningCompletions {
  readonly #byId = new Map<string, Running>();
  #controls = 0;

  /** A completion starts generating; the returned function ends it. */
  start(id: string, reasoningControl: boolean): () => void {
    const running: Running = { reasoningControl, ended: false };
    this.#byId.set(id, running);
    return () => {
      if (this.#byId.get(id) === running) this.#byId.delete(id);
    };
  }

  /** Controls that reached a running completion (the sim's figure for tests). */
  get controlled(): number {
    return this.#controls;
  }

  /** The control's answer, and its effect on the running completion. */
  control(body: Readonly<Record<string, unknown>>): ControlAnswer {
    const id = typeof body['id'] === 'string' ? body['id'] : '';
    const action = typeof body['action'] === 'string' ? body['action'] : '';
    if (id === '') return llamaBadRequest('missing completion id');
    if (action !== 'reasoning_end') return llamaBadRequest('unknown control action');
    const running = this.#byId.get(id);
    if (running === undefined) return { status: 200, body: { success: false, message: 'no active completion for this id' } };
    if (!running.reasoningControl)
      return { status: 200, body: { success: false, message: 'reasoning control not enabled for this completion' } };
    this.#controls += 1;
    running.ended = true;
    return { status: 200, body: { success: true } };
  }
}

function llamaBadRequest(message: string): ControlAnswer {
  return { status: 400, body: { error: { code: 400, message, type: 'invalid_request_error' } } };
}
