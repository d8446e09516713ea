// A translated request's own field (core/request-fields.ts): the translation's name (e.g.
// `messages→chat`, a bounded label), set on the request's report by the request feature
// (src/proxy/translate/) and read by what it reports (translation-reports.ts).

import { fieldKey } from '#src/core/request-fields.ts';

export const TRANSLATION = fieldKey<string>('translation');

/** The request's fields once it is served by translation `name` (ServedAs.fields). */
export const translatedFields = (name: string): Readonly<Record<string, string>> => Object.freeze({ [TRANSLATION.name]: name });
