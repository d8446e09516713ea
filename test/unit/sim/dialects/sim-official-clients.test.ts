// The official clients (`openai`, `@anthropic-ai/sdk`) run one tool loop against the simulated
// servers — the user asks, the sim calls the tool with valid arguments, the client sends the
// tool's result, the sim answers in text and ends the turn — streamed and not, in Chat
// Completions, Responses and Anthropic Messages.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startSimNode, type SimNode } from '#src/sim/index.ts';

const SCHEMA = {
  type: 'object' as const,
  properties: { command: { type: 'string' }, timeout_ms: { type: 'integer', minimum: 100 } },
  required: ['command', 'timeout_ms'],
};
const ASK = 'list the files here';
const RESULT = 'README.md notes.txt';

describe('official clients run a tool loop against the sims', () => {
  const nodes: Record<string, SimNode> = {};
  before(async () => {
    for (const kind of ['llamacpp', 'openai', 'vllm'] as const) {
      nodes[kind] = await startSimNode({
        kind,
        models: [{ id: 'coder', contextTokens: 131_072 }],
        ttftMs: 1,
        tokensPerSecond: 5000,
        answers: 'natural',
      });
    }
  });
  after(async () => {
    for (const node of Object.values(nodes)) await node.close();
  });
  const openai = (kind: string): OpenAI =>
    new OpenAI({ baseURL: `${nodes[kind]?.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 10_000 });

  for (const kind of ['llamacpp', 'openai', 'vllm']) {
    test(`openai chat on ${kind}: a streamed tool call, the result, then a final answer`, async () => {
      const client = openai(kind);
      const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
        { type: 'function', function: { name: 'shell', description: 'Runs a shell command', parameters: SCHEMA } },
      ];
      const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: ASK }];
      const stream = client.chat.completions.stream({ model: 'coder', messages, tools, max_tokens: 32_000 });
      const first = await stream.finalChatCompletion();
      const choice = first.choices[0];
      assert.equal(choice?.finish_reason, 'tool_calls');
      const toolCall = choice?.message.tool_calls?.[0];
      assert.ok(toolCall !== undefined && toolCall.type === 'function');
      assert.equal(toolCall.function.name, 'shell');
      assert.deepEqual(JSON.parse(toolCall.function.arguments), { command: 'ls', timeout_ms: 100 });
      messages.push(choice.message, { role: 'tool', tool_call_id: toolCall.id, content: RESULT });
      const final = await client.chat.completions.create({ model: 'coder', messages, tools, max_tokens: 32_000 });
      assert.equal(final.choices[0]?.finish_reason, 'stop');
      assert.match(final.choices[0]?.message.content ?? '', /README\.md notes\.txt/);
      assert.equal(final.choices[0]?.message.tool_calls?.length ?? 0, 0);
    });
  }

  test('openai responses on llamacpp: a function_call, its output, then a message', async () => {
    const client = openai('llamacpp');
    const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'shell', parameters: SCHEMA, strict: false }];
    const stream = client.responses.stream({ model: 'coder', input: ASK, tools });
    const first = await stream.finalResponse();
    const [item] = first.output;
    assert.ok(item !== undefined && item.type === 'function_call');
    assert.equal(item.name, 'shell');
    assert.deepEqual(JSON.parse(item.arguments), { command: 'ls', timeout_ms: 100 });
    const final = await client.responses.create({
      model: 'coder',
      tools,
      input: [
        { role: 'user', content: ASK },
        { type: 'function_call', call_id: item.call_id, name: item.name, arguments: item.arguments },
        { type: 'function_call_output', call_id: item.call_id, output: RESULT },
      ],
    });
    assert.equal(final.status, 'completed');
    assert.match(final.output_text, /README\.md notes\.txt/);
  });

  test('anthropic messages on llamacpp: a streamed tool_use, the tool_result, then end_turn', async () => {
    const client = new Anthropic({ baseURL: nodes['llamacpp']?.url, apiKey: 'unused', maxRetries: 0, timeout: 10_000 });
    const tools: Anthropic.Tool[] = [{ name: 'Bash', description: 'Executes a bash command', input_schema: SCHEMA }];
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: ASK }];
    const first = await client.messages.stream({ model: 'coder', max_tokens: 32_000, messages, tools }).finalMessage();
    assert.equal(first.stop_reason, 'tool_use');
    const use = first.content.find((block) => block.type === 'tool_use');
    assert.ok(use !== undefined && use.type === 'tool_use');
    assert.deepEqual(use.input, { command: 'ls', timeout_ms: 100 });
    messages.push(
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: RESULT }] },
    );
    const final = await client.messages.create({ model: 'coder', max_tokens: 32_000, messages, tools });
    assert.equal(final.stop_reason, 'end_turn');
    const text = final.content.find((block) => block.type === 'text');
    assert.match(text?.type === 'text' ? text.text : '', /README\.md notes\.txt/);
    const forced = await client.messages.create({
      model: 'coder',
      max_tokens: 32_000,
      messages: [{ role: 'user', content: 'hello' }],
      tools,
      tool_choice: { type: 'tool', name: 'Bash' },
    });
    assert.equal(forced.stop_reason, 'tool_use');
  });
});
