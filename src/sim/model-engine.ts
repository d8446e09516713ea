// One served model's inference engine: a fixed number of slots with a FIFO queue, prompt processing
// that takes `ttftMs`, then tokens at `tokensPerSecond`, all on the injected clock. In unified KV
// mode the processing requests share one pool of n_ctx tokens, and exhausting it fails them all.
// The decisions live in slot-table.ts, kv-budget.ts and context-rules.ts; this class only sequences.

import type { Clock, Timer } from '#src/core/clock.ts';
import type { FinishReason, GenerationPlan } from '#src/sim/context-rules.ts';
import { isKvExhausted, kvUsageRatio } from '#src/sim/kv-budget.ts';
import { busySlotCount, emptySlotTable, enqueueJob, removeJob, type SlotChange, type SlotTable } from '#src/sim/slot-table.ts';
import type { AnswerMode, KvMode, SimKind } from '#src/sim/spec.ts';
import { generatedPiece } from '#src/sim/synthetic-output.ts';
import { cachedPromptTokens, mostSimilarSlot, promptTtftMs } from '#src/sim/prompt-cache.ts';

export interface EngineSettings {
  readonly slots: number;
  /** Per-slot n_ctx; in unified mode also the size of the shared pool. */
  readonly contextTokens: number;
  readonly kv: KvMode;
  readonly ttftMs: number;
  readonly tokensPerSecond: number;
  /** What the model's text answers are (spec.ts `AnswerMode`); absent = `fill`. */
  readonly answers?: AnswerMode;
  /** The prompt cache (prompt-cache.ts): the first-token time of a fully cached prompt; absent = no cache. */
  readonly prefixCacheTtftMs?: number;
}

export interface GenerationOutcome {
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly finishReason: FinishReason;
  readonly text: string;
  readonly promptMs: number;
  readonly predictedMs: number;
  /** Prompt tokens reused from the slot's prompt cache. */
  readonly cachedTokens: number;
}

/** Callbacks for one request; exactly one of `finished` / `failed` ends it (unless cancelled). */
export interface GenerationObserver {
  token(piece: string, index: number): void;
  finished(outcome: GenerationOutcome): void;
  /** The unified KV pool ran out while this request was processing. */
  failed(): void;
}

export interface EngineCounters {
  readonly promptTokensTotal: number;
  readonly generatedTokensTotal: number;
  readonly promptMsTotal: number;
  readonly predictedMsTotal: number;
  readonly decodeTotal: number;
  readonly finishedStop: number;
  readonly finishedLength: number;
  readonly failedTotal: number;
  /** The most KV tokens in use at once so far. */
  readonly peakKvTokens: number;
}

export interface SlotView {
  readonly id: number;
  readonly isProcessing: boolean;
  /** The last task this slot ran (or runs), if any. */
  readonly lastTaskId: number | undefined;
  readonly lastPromptTokens: number;
  readonly generatedTokens: number;
}

interface Job {
  readonly id: number;
  readonly plan: GenerationPlan;
  readonly observer: GenerationObserver;
  phase: 'waiting' | 'prompt' | 'generating';
  generated: number;
  text: string;
  startedAtMs: number;
  firstTokenDueMs: number;
  firstTokenAtMs: number;
  cachedTokens: number;
  timer: Timer | undefined;
}

export class ModelEngine {
  readonly settings: EngineSettings;
  readonly #clock: Clock;
  readonly #jobs = new Map<number, Job>();
  readonly #slotHistory: {
    taskId: number | undefined;
    promptTokens: number;
    generated: number;
    promptText: string | undefined;
  }[];
  #table: SlotTable;
  #nextJobId = 1;
  #counters: { -readonly [K in keyof EngineCounters]: number } = {
    promptTokensTotal: 0,
    generatedTokensTotal: 0,
    promptMsTotal: 0,
    predictedMsTotal: 0,
    decodeTotal: 0,
    finishedStop: 0,
    finishedLength: 0,
    failedTotal: 0,
    peakKvTokens: 0,
  };

  constructor(settings: EngineSettings, clock: Clock) {
    this.settings = settings;
    this.#clock = clock;
    this.#table = emptySlotTable(settings.slots);
    this.#slotHistory = Array.from({ length: settings.slots }, () => ({
      taskId: undefined,
      promptTokens: 0,
      generated: 0,
      promptText: undefined,
    }));
  }

  /** Queues a request; returns a function that cancels it (safe to call at any time, repeatedly). */
  submit(plan: GenerationPlan, observer: GenerationObserver): () => void {
    const id = this.#nextJobId++;
    this.#jobs.set(id, {
      id,
      plan,
      observer,
      phase: 'waiting',
      generated: 0,
      text: '',
      startedAtMs: 0,
      firstTokenDueMs: 0,
      firstTokenAtMs: 0,
      cachedTokens: 0,
      timer: undefined,
    });
    const prompt = plan.promptText;
    const prefer =
      this.settings.prefixCacheTtftMs === undefined || prompt === undefined
        ? undefined
        : (free: readonly number[]) => mostSimilarSlot(free, (slot) => this.#slotHistory[slot], prompt);
    this.#apply(enqueueJob(this.#table, id, prefer));
    return () => this.#cancel(id);
  }

  /** Drops every request silently and stops all timers (the node is closing or unloading). */
  close(): void {
    for (const job of this.#jobs.values()) job.timer?.cancel();
    this.#jobs.clear();
    this.#table = emptySlotTable(this.settings.slots);
  }

  processingCount(): number {
    return busySlotCount(this.#table);
  }

  waitingCount(): number {
    return this.#table.waiting.length;
  }

  hasIdleSlot(): boolean {
    return this.#table.slots.includes(null);
  }

  kvTokensInUse(): number {
    return this.#usages().reduce((a, b) => a + b, 0);
  }

  kvUsageRatio(): number {
    return kvUsageRatio(this.settings.kv, this.settings.contextTokens, this.settings.slots, this.#usages());
  }

  counters(): EngineCounters {
    return { ...this.#counters };
  }

  slotViews(): SlotView[] {
    return this.#table.slots.map((holder, id) => {
      const history = this.#slotHistory[id];
      const job = holder === null ? undefined : this.#jobs.get(holder);
      return {
        id,
        isProcessing: holder !== null,
        lastTaskId: history?.taskId,
        lastPromptTokens: history?.promptTokens ?? 0,
        generatedTokens: job?.generated ?? history?.generated ?? 0,
      };
    });
  }

  #usages(): number[] {
    const usages: number[] = [];
    for (const job of this.#jobs.values()) {
      if (job.phase !== 'waiting') usages.push(job.plan.promptTokens + job.generated);
    }
    return usages;
  }

  #apply(change: SlotChange): void {
    this.#table = change.table;
    for (const { jobId, slot } of change.started) this.#begin(jobId, slot);
  }

  #begin(jobId: number, slot: number): void {
    const job = this.#jobs.get(jobId);
    if (job === undefined) return;
    const now = this.#clock.monotonicMs();
    const hitTtftMs = this.settings.prefixCacheTtftMs;
    const { promptTokens, promptText } = job.plan;
    job.cachedTokens =
      hitTtftMs === undefined ? 0 : cachedPromptTokens(this.#slotHistory[slot]?.promptText, promptText, promptTokens);
    const ttftMs =
      hitTtftMs === undefined
        ? this.settings.ttftMs
        : promptTtftMs(this.settings.ttftMs, hitTtftMs, job.cachedTokens, promptTokens);
    job.phase = 'prompt';
    job.startedAtMs = now;
    job.firstTokenDueMs = now + ttftMs;
    this.#slotHistory[slot] = { taskId: jobId, promptTokens, generated: 0, promptText };
    this.#counters.promptTokensTotal += job.plan.promptTokens;
    if (this.#failAllIfKvExhausted()) return;
    job.timer = this.#clock.setTimeout(() => this.#tick(jobId), ttftMs);
  }

  #tick(jobId: number): void {
    const job = this.#jobs.get(jobId);
    if (job === undefined || job.phase === 'waiting') return;
    job.timer = undefined;
    const now = this.#clock.monotonicMs();
    if (job.phase === 'prompt') {
      job.phase = 'generating';
      job.firstTokenAtMs = now;
      this.#counters.promptMsTotal += now - job.startedAtMs;
    }
    this.#counters.decodeTotal++;
    const intervalMs = 1000 / this.settings.tokensPerSecond;
    const due = Math.min(job.plan.maxNewTokens, Math.floor((now - job.firstTokenDueMs) / intervalMs) + 1);
    while (job.generated < due) {
      const index = job.generated++;
      const piece = job.plan.pieces?.[index] ?? generatedPiece(index);
      job.text += piece;
      this.#counters.generatedTokensTotal++;
      job.observer.token(piece, index);
      if (!this.#jobs.has(jobId) || this.#failAllIfKvExhausted()) return;
    }
    if (job.generated >= job.plan.maxNewTokens) {
      this.#finish(job, now);
      return;
    }
    const nextDueMs = job.firstTokenDueMs + job.generated * intervalMs;
    job.timer = this.#clock.setTimeout(() => this.#tick(jobId), Math.max(0, nextDueMs - now));
  }

  #finish(job: Job, now: number): void {
    const predictedMs = job.generated > 0 ? now - job.firstTokenAtMs : 0;
    this.#counters.predictedMsTotal += predictedMs;
    if (job.plan.finishReason === 'stop') this.#counters.finishedStop++;
    else this.#counters.finishedLength++;
    this.#jobs.delete(job.id);
    const history = this.#slotHistory.find((entry) => entry.taskId === job.id);
    if (history !== undefined) history.generated = job.generated;
    const change = removeJob(this.#table, job.id);
    this.#table = change.table;
    job.observer.finished({
      promptTokens: job.plan.promptTokens,
      completionTokens: job.generated,
      finishReason: job.plan.finishReason,
      text: job.text,
      promptMs: job.firstTokenAtMs - job.startedAtMs,
      predictedMs,
      cachedTokens: job.cachedTokens,
    });
    this.#apply({ table: this.#table, started: change.started });
  }

  /** Fails every processing request when the unified pool is over budget; true when it did. */
  #failAllIfKvExhausted(): boolean {
    const usages = this.#usages();
    this.#counters.peakKvTokens = Math.max(
      this.#counters.peakKvTokens,
      usages.reduce((a, b) => a + b, 0),
    );
    if (!isKvExhausted(this.settings.kv, this.settings.contextTokens, usages)) return false;
    const victims = [...this.#jobs.values()].filter((job) => job.phase !== 'waiting');
    const started: { jobId: number; slot: number }[] = [];
    for (const victim of victims) {
      victim.timer?.cancel();
      this.#jobs.delete(victim.id);
      const change = removeJob(this.#table, victim.id);
      this.#table = change.table;
      started.push(...change.started);
    }
    this.#counters.failedTotal += victims.length;
    for (const victim of victims) victim.observer.failed();
    this.#apply({ table: this.#table, started });
    return true;
  }

  #cancel(jobId: number): void {
    const job = this.#jobs.get(jobId);
    if (job === undefined) return;
    job.timer?.cancel();
    this.#jobs.delete(jobId);
    this.#apply(removeJob(this.#table, jobId));
  }
}

/**
 * An engine for `model` with the node's timing. Only llama.cpp kinds run a unified KV pool; the
 * others preempt or truncate instead of failing, so they get per-slot budgets.
 */
export function createModelEngine(
  node: {
    readonly kind: SimKind;
    readonly kv: KvMode;
    readonly ttftMs: number;
    readonly tokensPerSecond: number;
    readonly answers: AnswerMode;
    readonly prefixCacheTtftMs: number | undefined;
  },
  model: { readonly slots: number; readonly contextTokens: number },
  clock: Clock,
): ModelEngine {
  const isLlama = node.kind === 'llamacpp' || node.kind === 'llamacpp-router';
  const kv: KvMode = isLlama ? node.kv : 'per-slot';
  return new ModelEngine(
    {
      slots: model.slots,
      contextTokens: model.contextTokens,
      kv,
      ttftMs: node.ttftMs,
      tokensPerSecond: node.tokensPerSecond,
      answers: node.answers,
      ...(node.prefixCacheTtftMs === undefined || !isLlama ? {} : { prefixCacheTtftMs: node.prefixCacheTtftMs }),
    },
    clock,
  );
}
