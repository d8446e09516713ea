// A listing's `limit` query (pure), as OpenAI's and Anthropic's pages take it: a whole number from 1
// to the listing's most, its default when absent.

import { GatewayError } from '#src/core/errors.ts';

/** `limit` as OpenAI pages take it: 1..max, default `byDefault`. */
export function pageLimit(text: string | null, byDefault: number, max: number): number | GatewayError {
  if (text === null) return byDefault;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > max)
    return new GatewayError('GW_BAD_REQUEST', `\`limit\` must be a whole number from 1 to ${max}`, {
      status: 400,
      openaiType: 'invalid_request_error',
      param: 'limit',
    });
  return n;
}
