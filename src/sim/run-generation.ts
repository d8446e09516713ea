// Binds one generation on a model engine to one HTTP response: SSE events as tokens arrive (the
// headers go out with the first token, so errors before it are plain HTTP errors), or one JSON body
// at the end. A client that leaves cancels the generation and frees its slot.

import type { SimExchange } from '#src/sim/exchange.ts';
import type { GenerationPlan } from '#src/sim/context-rules.ts';
import { sendReply, type GenerationFormat, type InferenceDialect, type StreamFormat } from '#src/sim/inference-dialect.ts';
import type { GenerationObserver, GenerationOutcome, ModelEngine } from '#src/sim/model-engine.ts';

export function runGeneration(
  exchange: SimExchange,
  engine: ModelEngine,
  plan: GenerationPlan,
  format: GenerationFormat,
  stream: boolean,
  dialect: InferenceDialect,
): Promise<void> {
  const { writer, signal } = exchange;
  const streamFormat: StreamFormat | undefined = stream ? format.stream() : undefined;
  let opened = false;
  let cancel: (() => void) | undefined;
  let settle: () => void = () => {};
  const settled = new Promise<void>((resolve) => {
    settle = resolve;
  });
  const onAbort = (): void => {
    cancel?.();
    settle();
  };
  const finish = (): void => {
    signal.removeEventListener('abort', onAbort);
    settle();
  };
  const open = (events: StreamFormat): void => {
    if (opened) return;
    opened = true;
    writer.openStream(200, dialect.sseHeaders);
    for (const event of events.opening()) writer.event(event);
  };
  const observer: GenerationObserver = {
    token(piece: string, index: number): void {
      if (streamFormat === undefined) return;
      open(streamFormat);
      for (const event of streamFormat.token(piece, index)) writer.event(event);
    },
    finished(outcome: GenerationOutcome): void {
      if (streamFormat === undefined) {
        sendReply(writer, dialect.json(200, format.body(outcome)), dialect.chunkedReplies);
      } else {
        open(streamFormat);
        for (const event of streamFormat.closing(outcome)) writer.event(event);
        writer.endStream();
      }
      finish();
    },
    failed(): void {
      if (streamFormat !== undefined && opened) {
        writer.event(dialect.kvExhaustedEvent());
        writer.endStream();
      } else {
        sendReply(writer, dialect.kvExhaustedReply(), dialect.chunkedReplies);
      }
      finish();
    },
  };
  if (signal.aborted) return Promise.resolve();
  signal.addEventListener('abort', onAbort, { once: true });
  cancel = engine.submit(plan, observer);
  return settled;
}
