// Reading the node's prompt count from the end of its answer (issue 21 item 1): the last
// `prompt_tokens` / `input_tokens` number, never one quoted inside generated text, within a bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { heldPromptTokens, lastPromptTokens, USAGE_TAIL_BYTES, UsageTail } from '#src/proxy/attempt/usage-tail.ts';

const TABLE: readonly { name: string; text: string; want: number | undefined }[] = [
  { name: 'a chat answer', text: '{"choices":[],"usage":{"prompt_tokens":1435,"completion_tokens":8,"total_tokens":1443}}', want: 1435 },
  { name: 'a Responses answer', text: '{"usage":{"input_tokens":77,"input_tokens_details":{"cached_tokens":0},"output_tokens":5}}', want: 77 },
  { name: 'the last of several (a stream whose usage chunk comes last)', text: 'data: {"usage":{"prompt_tokens":1}}\n\ndata: {"usage":{"prompt_tokens":12}}\n\ndata: [DONE]', want: 12 },
  { name: 'none', text: '{"choices":[{"message":{"content":"hi"}}]}', want: undefined },
  { name: 'one quoted in the generated text does not count', text: '{"choices":[{"message":{"content":"say \\"prompt_tokens\\": 999"}}]}', want: undefined },
  { name: 'spaces around the colon', text: '{"usage": {"prompt_tokens" : 42}}', want: 42 },
];

for (const c of TABLE) test(`lastPromptTokens: ${c.name}`, () => assert.equal(lastPromptTokens(c.text), c.want));

test('UsageTail keeps only the answer\'s end, across chunks', () => {
  const tail = new UsageTail();
  tail.push(Buffer.from('{"usage":{"prompt_tokens":5}}'));
  for (let i = 0; i < 20; i++) tail.push(Buffer.from('x'.repeat(1000)));
  assert.equal(tail.promptTokens(), undefined, 'an early count is out of the tail');
  tail.push(Buffer.from('{"usage":{"prompt_'));
  tail.push(Buffer.from('tokens":321}}'));
  assert.equal(tail.promptTokens(), 321, 'a count split over two chunks');
});

test('heldPromptTokens reads a whole answer\'s last bytes only', () => {
  assert.equal(heldPromptTokens(Buffer.from('{"usage":{"prompt_tokens":9}}')), 9);
  assert.equal(heldPromptTokens(Buffer.from(`{"usage":{"prompt_tokens":9}}${' '.repeat(USAGE_TAIL_BYTES)}`)), undefined);
});
