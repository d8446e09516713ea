// Issue 40, item 1: the demo runs coding agents. Its fleet has a model with an agent-sized context
// on nodes that speak every agent's API, its answers end by themselves, and it calls tools; so
// a Claude-Code-sized request (~27.5k prompt tokens, max_tokens 32,000) through the demo gateway
// gets a tool call and, after the tool's result, a final answer — in Anthropic Messages (Claude
// Code), Responses (Codex) and Chat Completions (OpenCode). The printed Try lines name the gateway.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { agentLines, DEMO_AGENT_MODEL, DEMO_FLEET, demoGatewayToml } from '#src/cli/demo.ts';
import { eventually } from '#test/fixtures/http.ts';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';

let demo: FleetAndGateway;
const model = DEMO_AGENT_MODEL;
const SHELL = {
  type: 'object' as const,
  properties: { command: { type: 'string' }, description: { type: 'string' } },
  required: ['command'],
};
/** About Claude Code's first request: ~27.5k prompt tokens under the sim tokenizer (one per word). */
const SYSTEM = 'You are an agent. '.repeat(6_900);

const listedModels = async (): Promise<string[]> => {
  const listing = (await (await fetch(`${demo.gw.url}/v1/models`)).json()) as { data: { id: string }[] };
  return listing.data.map((m) => m.id);
};

before(async () => {
  demo = await startFleetAndGateway(DEMO_FLEET, (sim) => demoGatewayToml(sim.nodes, 0), { logLevel: 'warn' });
  await eventually(async () => (await listedModels()).includes(model), 60_000, `the gateway lists ${model}`);
});
after(() => demo?.close());

test('the demo lists the agent model with its 131,072-token context', async () => {
  assert.ok((await listedModels()).includes(model));
  for (const name of ['agent-a', 'agent-b']) {
    const props = (await (await fetch(`${demo.sim.url(name)}/props`)).json()) as {
      default_generation_settings: { n_ctx: number };
    };
    assert.equal(props.default_generation_settings.n_ctx, 131_072);
  }
});

test('Claude Code: a 27.5k-token prompt with max_tokens 32,000 gets a tool_use, then end_turn after the result', async () => {
  const client = new Anthropic({ baseURL: demo.gw.url, apiKey: 'demo', maxRetries: 0, timeout: 30_000 });
  const tools: Anthropic.Tool[] = [
    { name: 'Bash', description: 'Executes a bash command and returns its output.', input_schema: SHELL },
  ];
  const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'list the files here' }];
  const first = await client.messages.stream({ model, max_tokens: 32_000, system: SYSTEM, messages, tools }).finalMessage();
  assert.equal(first.stop_reason, 'tool_use');
  assert.ok(first.usage.input_tokens > 27_000, `${first.usage.input_tokens} prompt tokens`);
  const use = first.content.find((b) => b.type === 'tool_use');
  assert.ok(use?.type === 'tool_use');
  assert.deepEqual(use.input, { command: 'ls' });
  messages.push(
    { role: 'assistant', content: first.content },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'README.md' }] },
  );
  const final = await client.messages.stream({ model, max_tokens: 32_000, system: SYSTEM, messages, tools }).finalMessage();
  assert.equal(final.stop_reason, 'end_turn');
  assert.ok(final.usage.output_tokens < 100, `a short answer, not max_tokens: ${final.usage.output_tokens}`);
});

test('Codex (Responses) and OpenCode (Chat Completions): a tool call, then a final answer', async () => {
  const client = new OpenAI({ baseURL: `${demo.gw.url}/v1`, apiKey: 'demo', maxRetries: 0, timeout: 30_000 });
  const first = await client.responses.create({
    model,
    instructions: SYSTEM,
    input: 'list the files here',
    tools: [{ type: 'function', name: 'shell', parameters: SHELL, strict: false }],
  });
  const [call] = first.output;
  assert.ok(call?.type === 'function_call', JSON.stringify(first.output));
  const final = await client.responses.create({
    model,
    instructions: SYSTEM,
    tools: [{ type: 'function', name: 'shell', parameters: SHELL, strict: false }],
    input: [
      { role: 'user', content: 'list the files here' },
      { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
      { type: 'function_call_output', call_id: call.call_id, output: 'README.md' },
    ],
  });
  assert.equal(final.status, 'completed');
  assert.match(final.output_text, /README\.md/);

  const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
    { type: 'function', function: { name: 'bash', parameters: SHELL } },
  ];
  const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: 'list the files here' },
  ];
  const chat = await client.chat.completions.stream({ model, messages, tools, max_tokens: 32_000 }).finalChatCompletion();
  const choice = chat.choices[0];
  assert.equal(choice?.finish_reason, 'tool_calls');
  const toolCall = choice?.message.tool_calls?.[0];
  assert.ok(toolCall?.type === 'function');
  messages.push(choice.message, { role: 'tool', tool_call_id: toolCall.id, content: 'README.md' });
  const answer = await client.chat.completions.create({ model, messages, tools, max_tokens: 32_000 });
  assert.equal(answer.choices[0]?.finish_reason, 'stop');
});

test('the Try lines point each agent at the gateway and the agent model', () => {
  const lines = agentLines('http://127.0.0.1:4000');
  const [, claude, codex, opencode] = lines;
  assert.match(
    claude ?? '',
    /^ {2}ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:4000 ANTHROPIC_AUTH_TOKEN=\S+ ANTHROPIC_MODEL=qwen3-coder-30b .* claude$/,
  );
  assert.match(codex ?? '', /^ {2}codex .*base_url="http:\/\/127\.0\.0\.1:4000\/v1",wire_api="responses"/);
  const config = /^ {2}OPENCODE_CONFIG_CONTENT='(.*)' opencode$/.exec(opencode ?? '')?.[1];
  const parsed = JSON.parse(config ?? 'null') as {
    model: string;
    provider: { switchyard: { npm: string; options: { baseURL: string } } };
  };
  assert.equal(parsed.model, `switchyard/${model}`);
  assert.equal(parsed.provider.switchyard.npm, '@ai-sdk/openai-compatible');
  assert.equal(parsed.provider.switchyard.options.baseURL, 'http://127.0.0.1:4000/v1');
});
