// The one list of translations (translation.ts): which client APIs the gateway serves over which
// node API, tried in order by the request feature (src/proxy/translate/) for a request none of the
// model's nodes speaks natively.

import { MESSAGES_OVER_CHAT } from './messages/messages-translation.ts';
import { RESPONSES_OVER_CHAT } from './responses/responses-translation.ts';
import type { Translation } from './translation.ts';

export const TRANSLATIONS: readonly Translation[] = Object.freeze([MESSAGES_OVER_CHAT, RESPONSES_OVER_CHAT]);
