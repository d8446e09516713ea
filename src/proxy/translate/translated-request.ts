// A request served in another API (request-feature.ts, ServedAs): its body translated for the
// node's endpoint (the model as resolved, the name the client asked for kept for its answer), or
// refused 400 naming the field the translation cannot carry.

import { Buffer } from 'node:buffer';
import { badRequest } from '#src/core/errors.ts';
import type { Translation, TranslationContext } from '#src/translate/translation.ts';
import { translatedFields } from '#src/translate/translated-field.ts';
import type { Refused, ServedAs, TranslationAsk } from '../feature/request-feature.ts';
import { translatedAnswer } from './translated-answer.ts';

export function servedAs(translation: Translation, ask: TranslationAsk, nowSeconds: number): ServedAs | Refused {
  const { resolved } = ask;
  const context: TranslationContext = { requestId: ask.requestId, model: resolved.requestedModel, nowSeconds };
  const translated = translation.request({ ...resolved.json, model: resolved.model }, context);
  if (translated.kind === 'untranslatable') {
    const error = badRequest(
      `${translated.message} (this model is served over ${translation.node} here, which cannot carry it)`,
      translated.field,
    );
    return { kind: 'refused', error };
  }
  const json = translated.body;
  return {
    kind: 'served_as',
    name: translation.name,
    fields: translatedFields(translation.name),
    endpoint: translation.node,
    resolved: {
      model: resolved.model,
      requestedModel: resolved.requestedModel,
      group: resolved.group,
      policy: resolved.policy,
      stream: translated.stream,
      body: Buffer.from(JSON.stringify(json), 'utf8'),
      json,
    },
    rewrite: translatedAnswer(translation, translated.memo, context),
  };
}
