// llama-server's `/v1/audio/transcriptions` (and `/audio/transcriptions`), as build b10587 answers
// it (tools/server/server-chat.cpp `convert_transcriptions_to_chatcmpl`, server-task.cpp
// `to_json_oaicompat_asr`): a multipart form with a `file`; only `response_format` `json`; the
// answer `{"type":"transcript.text.done","text":…,"usage":{"type":"tokens",…}}`. The router proxies
// it to the model's child like any POST.

import { formFields } from '#src/sim/pooling-audio.ts';
import type { SimExchange } from '#src/sim/exchange.ts';
import { tokenize } from '#src/sim/tokenizer.ts';

export type LlamaTranscription =
  { readonly ok: true; readonly json: Record<string, unknown> } | { readonly ok: false; readonly message: string };

/** The form's text fields (the router reads `model` from them); undefined = not a readable form. */
export function transcriptionFields(exchange: SimExchange): Record<string, string> | undefined {
  const form = formFields(exchange);
  return form === undefined ? undefined : { ...form.fields };
}

export function llamaTranscription(exchange: SimExchange): LlamaTranscription {
  const form = formFields(exchange);
  if (form === undefined || form.fileBytes === undefined) return { ok: false, message: 'No input file found for transcription' };
  if ((form.fields['response_format'] ?? 'json') !== 'json')
    return { ok: false, message: "Only 'json' response_format is supported for transcription" };
  const spoken = ['the', 'quick', 'brown', 'fox', 'jumps', 'over', 'a', 'lazy', 'dog'];
  const count = Math.max(1, Math.min(40, Math.ceil(form.fileBytes / 1024)));
  const text = Array.from({ length: count }, (_, i) => spoken[i % spoken.length]).join(' ');
  const input = 16 + Math.ceil(form.fileBytes / 640);
  const output = tokenize(text).length;
  return {
    ok: true,
    json: {
      type: 'transcript.text.done',
      text,
      usage: {
        type: 'tokens',
        input_tokens: input,
        output_tokens: output,
        total_tokens: input + output,
        input_tokens_details: { cached_tokens: 0 },
      },
    },
  };
}
