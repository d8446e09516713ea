// Where an attempt's abort comes from. Its signal is read where a signal is the interface (the
// connection gate, undici's queue); the attempt's own call is told straight, without an
// EventTarget listener added and removed per attempt (the exchange owns the abort: attempt-exchange.ts).

/** What is told when the attempt aborts; its signal has the reason by then. */
export interface AbortListener {
  handleEvent(): void;
}

export interface AbortSource {
  readonly signal: AbortSignal;
  /** `listener` is told once, right after the signal aborts; undefined: no longer. */
  onAbort(listener: AbortListener | undefined): void;
}

/** A plain signal as a source (its listener an EventTarget one): for callers that own no exchange. */
export function signalSource(signal: AbortSignal): AbortSource {
  let current: AbortListener | undefined;
  return {
    signal,
    onAbort(listener) {
      if (current !== undefined) signal.removeEventListener('abort', current);
      current = listener;
      if (listener !== undefined) signal.addEventListener('abort', listener, { once: true });
    },
  };
}
