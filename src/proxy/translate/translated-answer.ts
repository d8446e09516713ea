// What the client gets of a translated request's answer (attempt/answer-rewrite.ts), from its
// translation and what the translation remembered of the request: the whole JSON answer
// translated, the event stream through a StreamTranslator, the node's error bodies in the client's
// API's shape (its status kept), and the gateway's own errors in the client endpoint's dialect.

import { isRecord } from '#src/core/is-record.ts';
import type { Translation, TranslationContext } from '#src/translate/translation.ts';
import type { AnswerRewrite } from '../attempt/answer-rewrite.ts';
import { errorDialectFor, type ErrorDialect } from '../http/error-dialect.ts';
import { TranslatedStream } from './translated-stream.ts';

export function translatedAnswer(translation: Translation, memo: unknown, context: TranslationContext): AnswerRewrite {
  return {
    json: (parsed) => JSON.stringify(translation.answer(isRecord(parsed) ? { ...parsed } : {}, memo, context)),
    stream: (inner) => new TranslatedStream(translation.stream(memo, context), inner),
    errors: translatedErrors(translation),
  };
}

/** The client endpoint's dialect for the gateway's own errors; a node's error body goes through the translation. */
function translatedErrors(translation: Translation): ErrorDialect {
  const client = errorDialectFor(translation.client);
  return {
    name: client.name,
    body: client.body,
    passedOn: (status, text) => JSON.stringify(translation.error(status, parsedOr(text))),
    // A translated stream ends through its translator (TranslatedStream.broke); this is the client API's own event otherwise.
    streamError: client.streamError,
  };
}

function parsedOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
