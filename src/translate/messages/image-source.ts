// An Anthropic image block's `source` → the URL an OpenAI `image_url` part carries: a base64 source
// as a data URL, a url source as it is. A `file` source (the Files API) names nothing a node can fetch.

import { isRecord } from '#src/core/is-record.ts';
import { CannotCarry } from '../untranslatable.ts';

export function imageUrlPart(block: Readonly<Record<string, unknown>>, field: string): Record<string, unknown> {
  const source = block.source;
  if (!isRecord(source)) throw new CannotCarry(`${field}.source`, 'an image needs a source object');
  if (source.type === 'base64') {
    if (typeof source.data !== 'string') throw new CannotCarry(`${field}.source.data`, 'must be a base64 string');
    const media = typeof source.media_type === 'string' ? source.media_type : 'image/jpeg';
    return { type: 'image_url', image_url: { url: `data:${media};base64,${source.data}` } };
  }
  if (source.type === 'url') {
    if (typeof source.url !== 'string') throw new CannotCarry(`${field}.source.url`, 'must be a string');
    return { type: 'image_url', image_url: { url: source.url } };
  }
  throw new CannotCarry(
    `${field}.source.type`,
    `an image source of type ${JSON.stringify(source.type)} cannot be sent to a Chat Completions node (base64 and url can)`,
  );
}
