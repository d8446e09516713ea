// What a sim node saw: every request it received (control endpoints excluded) and live counters.
// Tests assert on this to prove exactly what a gateway sent, and whether it hung up early.

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  /** From the JSON body's `model`, else from `?model=`. */
  readonly model?: string;
  /** Epoch ms (the node's clock) when the request arrived. */
  readonly at: number;
}

export interface SimStats {
  /** Requests received whose response has not ended yet. */
  readonly inFlight: number;
  /** Responses sent completely. */
  readonly completed: number;
  /** Requests whose client connection closed before the response finished. */
  readonly clientAborted: number;
  /** TCP connections open now. */
  readonly connectionsOpen: number;
  /** Model residency, for kinds that load models at runtime (llama.cpp router). */
  readonly residency?: ResidencyStats;
}

export interface ResidencyStats {
  /** Models running (loaded, loading or sleeping) now. */
  readonly running: number;
  /** The most models ever running at once. */
  readonly peakRunning: number;
  /** Loads started since the node started. */
  readonly loads: number;
  /** Models with requests queued in the node itself (models_max reached, no idle victim). */
  readonly queued: readonly string[];
  /** Unloads (asked or by eviction) of a model with a request in flight at the node. */
  readonly unloadsMidRequest: number;
  /** The most loads under way at once, counted as a load starts (one it cuts short counts until then). */
  readonly peakLoading: number;
  /** Loads started, unloads asked, or requests needing a load arriving, while another model was loading: switches that overlapped. */
  readonly overlaps: number;
}

/** How one request ended, from the server's side. */
export type RequestEnd = 'completed' | 'client_aborted' | 'destroyed_by_fault';

export class RequestRecorder {
  #requests: RecordedRequest[] = [];
  #inFlight = 0;
  #completed = 0;
  #clientAborted = 0;
  #connectionsOpen = 0;
  readonly #listeners = new Set<() => void>();

  /** Calls `listener` after every change of what was recorded (a request arrived or ended, a connection opened or closed) or `changed()` announced. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** `stream`: a long-lived event stream, recorded but not counted in flight, nor its end. */
  record(request: RecordedRequest, stream = false): void {
    this.#requests.push(Object.freeze({ ...request, query: Object.freeze({ ...request.query }) }));
    if (!stream) this.#inFlight++;
    this.changed();
  }

  ended(end: RequestEnd | 'stream'): void {
    if (end === 'stream') {
      this.changed();
      return;
    }
    this.#inFlight = Math.max(0, this.#inFlight - 1);
    if (end === 'completed') this.#completed++;
    else if (end === 'client_aborted') this.#clientAborted++;
    this.changed();
  }

  connectionOpened(): void {
    this.#connectionsOpen++;
    this.changed();
  }

  connectionClosed(): void {
    this.#connectionsOpen = Math.max(0, this.#connectionsOpen - 1);
    this.changed();
  }

  /** Tells the listeners that something else the node's stats show changed (its model residency). */
  changed(): void {
    for (const listener of this.#listeners) listener();
  }

  requests(): readonly RecordedRequest[] {
    return [...this.#requests];
  }

  stats(): SimStats {
    return {
      inFlight: this.#inFlight,
      completed: this.#completed,
      clientAborted: this.#clientAborted,
      connectionsOpen: this.#connectionsOpen,
    };
  }

  /** Forgets the recorded requests and the completed/aborted counts; live counts stay. */
  clear(): void {
    this.#requests = [];
    this.#completed = 0;
    this.#clientAborted = 0;
  }
}
