// A Responses message's content (a string, or parts: `input_text`, `output_text`, `input_image`) →
// a chat message's content: one string when it is all text (what every chat template reads), else
// chat parts (`text`, `image_url`). An image by URL or data URL is carried with its `detail`; an
// uploaded file (`file_id`, `input_file`) lives in OpenAI's store, which a node cannot read.

import { isRecord } from '#src/core/is-record.ts';
import type { JsonObject, Untranslatable } from '#src/translate/translation.ts';
import { isUntranslatable, untranslatable } from '#src/translate/untranslatable.ts';

export type ChatContent = string | readonly JsonObject[];

/** A text part of any Responses content type (`input_text`, `output_text`, or a `refusal`'s words), else undefined. */
export function partText(part: Readonly<Record<string, unknown>>): string | undefined {
  if (
    (part['type'] === 'input_text' || part['type'] === 'output_text' || part['type'] === 'text') &&
    typeof part['text'] === 'string'
  )
    return part['text'];
  if (part['type'] === 'refusal' && typeof part['refusal'] === 'string') return part['refusal'];
  return undefined;
}

/** An `input_image` part → chat's `image_url` part. */
export function imagePart(part: Readonly<Record<string, unknown>>, field: string): JsonObject | Untranslatable {
  const url = part['image_url'];
  if (typeof url !== 'string' || url === '') {
    return untranslatable(
      part['file_id'] === undefined ? `${field}.image_url` : `${field}.file_id`,
      part['file_id'] === undefined
        ? 'an input_image needs an image_url (a URL or a data: URL)'
        : 'an image uploaded to OpenAI (file_id) cannot be read by a Chat Completions node: send it as an image_url',
    );
  }
  const detail = part['detail'];
  return { type: 'image_url', image_url: typeof detail === 'string' ? { url, detail } : { url } };
}

/** Joins text-only content into one string; keeps parts when an image is among them. */
export function chatContent(parts: readonly JsonObject[]): ChatContent {
  if (parts.every((part) => part['type'] === 'text')) return parts.map((part) => String(part['text'])).join('\n');
  return parts;
}

/** A message's `content` (string or parts) → chat content, or the part that cannot be carried. */
export function messageContent(content: unknown, field: string): ChatContent | Untranslatable {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return untranslatable(field, 'a message content must be a string or a list of parts');
  const parts: JsonObject[] = [];
  for (const [index, part] of content.entries()) {
    const at = `${field}[${index}]`;
    if (!isRecord(part)) return untranslatable(at, 'a content part must be an object');
    const text = partText(part);
    if (text !== undefined) {
      parts.push({ type: 'text', text });
      continue;
    }
    if (part['type'] === 'input_image') {
      const image = imagePart(part, at);
      if (isUntranslatable(image)) return image;
      parts.push(image);
      continue;
    }
    return untranslatable(
      `${at}.type`,
      part['type'] === 'input_file'
        ? 'a file input has no Chat Completions equivalent a node reads: send its text as input_text'
        : `a content part of type '${String(part['type'])}' has no Chat Completions equivalent`,
    );
  }
  return chatContent(parts);
}
