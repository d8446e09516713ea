// I/O: one node's pushed model state (a router's `GET /models/sse`), held open and bounded: the
// connection's answer head within `connectTimeoutMs`, no frame longer than `maxFrameBytes`, at most
// `burstFrames` frames at once and `framesPerSecond` after (a token bucket on the clock), and a
// stream silent for `idleTimeoutMs` given up (the router sends no keep-alive; a half-open connection
// must not hold the node's push forever). Each stop names its reason and is followed by a reconnect
// after a back-off (doubling from `backoffMinMs` to `backoffMaxMs`, back to the minimum once a stream
// has carried a frame); a node that answers the path with 404/405/501 or without an event stream does
// not serve it and is asked again only after `unsupportedRetryMs` (it may be upgraded). Every
// (re)connect is reported (`onOpen`): frames missed while the stream was down are only in a listing.
// The API key is sent, never reported. Never throws.

import type { Clock, Timer } from '#src/core/clock.ts';
import type { ExchangeController, ExchangeDispatcher, ExchangeHandler, ExchangeHeaders } from '#src/core/bounded-exchange.ts';
import { SseFrames } from './sse-frames.ts';

export interface ModelEventLimits {
  readonly maxFrameBytes: number;
  readonly framesPerSecond: number;
  readonly burstFrames: number;
  readonly idleTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly backoffMinMs: number;
  readonly backoffMaxMs: number;
  readonly unsupportedRetryMs: number;
}

/** The bounds used unless a caller says otherwise (docs/protocols.md "Pushed model state"). */
export const MODEL_EVENT_LIMITS: ModelEventLimits = Object.freeze({
  // A `loaded` frame carries the child's model info (its chat template among it): generous, not unbounded.
  maxFrameBytes: 256 * 1024,
  // A child throttles load progress to 5/s and download progress to 10/s per file.
  framesPerSecond: 50,
  burstFrames: 200,
  idleTimeoutMs: 300_000,
  connectTimeoutMs: 10_000,
  backoffMinMs: 1_000,
  backoffMaxMs: 60_000,
  unsupportedRetryMs: 600_000,
});

export type StopReason =
  'unsupported' | 'http_error' | 'failed' | 'ended' | 'idle' | 'frame_too_large' | 'too_fast' | 'connect_timeout' | 'closed';

export interface StreamStop {
  readonly reason: StopReason;
  readonly detail: string;
  /** When the next connection is tried, ms from now; undefined once closed. */
  readonly retryInMs: number | undefined;
}

export interface ModelEventStreamOptions {
  readonly clock: Clock;
  /** One connection per stream: never the polling agents' (the stream holds its connection). */
  readonly dispatcher: ExchangeDispatcher;
  /** The node's base URL. */
  readonly url: string;
  readonly path: string;
  readonly apiKey?: string | undefined;
  readonly limits?: ModelEventLimits;
  /** The stream is open (its answer head said an event stream): what it missed is only in a listing. */
  readonly onOpen: () => void;
  /** One frame's data, parsed as JSON; `error` when it is not JSON (the frame is skipped, the stream goes on). */
  readonly onFrame: (data: unknown, error?: string) => void;
  readonly onStop: (stop: StreamStop) => void;
}

export interface StreamState {
  readonly open: boolean;
  readonly frames: number;
  readonly lastStop: StreamStop | undefined;
}

export class ModelEventStream {
  readonly #options: ModelEventStreamOptions;
  readonly #limits: ModelEventLimits;
  #closed = false;
  #timer: Timer | undefined;
  #attempt: Attempt | undefined;
  #backoffMs: number;
  #frames = 0;
  #lastStop: StreamStop | undefined;

  constructor(options: ModelEventStreamOptions) {
    this.#options = options;
    this.#limits = options.limits ?? MODEL_EVENT_LIMITS;
    this.#backoffMs = this.#limits.backoffMinMs;
  }

  start(): void {
    if (this.#closed || this.#attempt !== undefined || this.#timer !== undefined) return;
    this.#connect();
  }

  state(): StreamState {
    return { open: this.#attempt?.open === true, frames: this.#frames, lastStop: this.#lastStop };
  }

  /** Final: the connection is closed, no reconnect. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#attempt?.stop('closed', 'the stream was closed');
  }

  #connect(): void {
    this.#timer = undefined;
    const base = this.#options.url.replace(/\/+$/, '');
    const target = new URL(`${base}${this.#options.path}`);
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (this.#options.apiKey !== undefined && this.#options.apiKey !== '')
      headers['authorization'] = `Bearer ${this.#options.apiKey}`;
    const attempt = new Attempt(this.#options.clock, this.#limits, {
      open: () => this.#options.onOpen(),
      frame: (data, error) => {
        this.#frames += 1;
        this.#backoffMs = this.#limits.backoffMinMs;
        this.#options.onFrame(data, error);
      },
      stopped: (reason, detail) => this.#stopped(attempt, reason, detail),
    });
    this.#attempt = attempt;
    try {
      this.#options.dispatcher.dispatch(
        {
          origin: target.origin,
          path: target.pathname + target.search,
          method: 'GET',
          headers,
          // undici's own timers are backstops behind ours (the idle one is on the clock).
          headersTimeout: this.#limits.connectTimeoutMs * 2,
          bodyTimeout: this.#limits.idleTimeoutMs * 2,
        },
        attempt,
      );
    } catch (error) {
      attempt.stop('failed', error instanceof Error ? error.message : String(error));
    }
  }

  #stopped(attempt: Attempt, reason: StopReason, detail: string): void {
    if (this.#attempt !== attempt) return;
    this.#attempt = undefined;
    if (this.#closed) {
      this.#lastStop = { reason, detail, retryInMs: undefined };
      return;
    }
    // A quiet stream given up is no failure: asked again at once. Anything else backs off.
    const retryInMs = reason === 'unsupported' ? this.#limits.unsupportedRetryMs : reason === 'idle' ? 0 : this.#nextBackoff();
    const stop = { reason, detail, retryInMs };
    this.#lastStop = stop;
    this.#options.onStop(stop);
    this.#timer = this.#options.clock.setTimeout(() => this.#connect(), retryInMs);
  }

  #nextBackoff(): number {
    const delay = this.#backoffMs;
    this.#backoffMs = Math.min(this.#limits.backoffMaxMs, this.#backoffMs * 2);
    return delay;
  }
}

interface AttemptEvents {
  open(): void;
  frame(data: unknown, error?: string): void;
  stopped(reason: StopReason, detail: string): void;
}

/** One connection: its answer head checked, its body split into frames under the bounds. */
class Attempt implements ExchangeHandler {
  open = false;
  readonly #clock: Clock;
  readonly #limits: ModelEventLimits;
  readonly #events: AttemptEvents;
  readonly #frames: SseFrames;
  #controller: ExchangeController | undefined;
  #stopped = false;
  #timer: Timer | undefined;
  #tokens: number;
  #tokensAt: number;

  constructor(clock: Clock, limits: ModelEventLimits, events: AttemptEvents) {
    this.#clock = clock;
    this.#limits = limits;
    this.#events = events;
    this.#frames = new SseFrames(limits.maxFrameBytes);
    this.#tokens = limits.burstFrames;
    this.#tokensAt = clock.monotonicMs();
    this.#arm(limits.connectTimeoutMs, 'connect_timeout', `no answer within ${limits.connectTimeoutMs} ms`);
  }

  stop(reason: StopReason, detail: string): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#timer?.cancel();
    this.#controller?.abort(new Error(`model event stream stopped: ${reason}`));
    this.#events.stopped(reason, detail);
  }

  onRequestStart(controller: ExchangeController): void {
    this.#controller = controller;
    if (this.#stopped) controller.abort(new Error('model event stream stopped'));
  }

  onResponseStart(_controller: ExchangeController, status: number, headers: ExchangeHeaders): void {
    if (status < 200 || this.#stopped) return;
    const type = String(headers['content-type'] ?? '');
    if (status === 404 || status === 405 || status === 501) {
      this.stop('unsupported', `answered HTTP ${status}: the node has no model event stream`);
      return;
    }
    if (status < 200 || status >= 300) {
      this.stop('http_error', `answered HTTP ${status}`);
      return;
    }
    if (!type.toLowerCase().startsWith('text/event-stream')) {
      this.stop(
        'unsupported',
        `answered ${type === '' ? 'without a content type' : `'${type.slice(0, 80)}'`}, not an event stream`,
      );
      return;
    }
    this.open = true;
    this.#arm(this.#limits.idleTimeoutMs, 'idle', `no frame for ${this.#limits.idleTimeoutMs} ms`);
    this.#events.open();
  }

  onResponseData(_controller: ExchangeController, chunk: Buffer): void {
    if (this.#stopped || !this.open) return;
    this.#arm(this.#limits.idleTimeoutMs, 'idle', `no frame for ${this.#limits.idleTimeoutMs} ms`);
    const split = this.#frames.push(chunk);
    if (!split.ok) {
      this.stop('frame_too_large', split.error);
      return;
    }
    for (const frame of split.frames) {
      if (this.#stopped) return;
      if (!this.#take()) {
        this.stop(
          'too_fast',
          `more than ${this.#limits.burstFrames} frames at once or ${this.#limits.framesPerSecond} a second; the listing poll tells meanwhile`,
        );
        return;
      }
      let data: unknown;
      try {
        data = JSON.parse(frame);
      } catch (error) {
        this.#events.frame(undefined, `frame is not JSON (${error instanceof Error ? error.message : String(error)})`);
        continue;
      }
      this.#events.frame(data);
    }
  }

  onResponseEnd(): void {
    this.stop('ended', 'the node ended the stream');
  }

  onResponseError(_controller: ExchangeController | undefined, error: Error): void {
    this.stop('failed', error.message);
  }

  /** One frame's token from the bucket; false = over the rate. */
  #take(): boolean {
    const now = this.#clock.monotonicMs();
    const refill = ((now - this.#tokensAt) / 1000) * this.#limits.framesPerSecond;
    this.#tokens = Math.min(this.#limits.burstFrames, this.#tokens + refill);
    this.#tokensAt = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  #arm(ms: number, reason: StopReason, detail: string): void {
    this.#timer?.cancel();
    this.#timer = this.#clock.setTimeout(() => this.stop(reason, detail), ms);
  }
}
