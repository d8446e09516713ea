// `switchyard demo` end to end with the official openai client, exactly as a user would run it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startCli, type RunningProcess } from '#test/fixtures/processes.ts';

let demo: RunningProcess;
let client: OpenAI;

before(async () => {
  demo = startCli(['demo', '--port', '0']);
  const line = await demo.waitForLine((l) => l.startsWith('Switchyard demo gateway: '));
  const url = line.slice('Switchyard demo gateway: '.length).trim();
  client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 15_000 });
});

after(async () => {
  const code = await demo?.stop('SIGINT');
  assert.equal(code, 0, `the demo exits cleanly on Ctrl-C; stderr: ${demo.stderr.slice(-20).join('\n')}`);
});

test('the demo prints three copy-paste curl lines', async () => {
  await demo.waitForLine((l) => l.includes('Ctrl-C'));
  assert.equal(demo.lines.filter((l) => l.trim().startsWith('curl ')).length, 3);
});

test('the demo prints a Try line for Claude Code, Codex and OpenCode, each on its gateway', async () => {
  await demo.waitForLine((l) => l.includes('Ctrl-C'));
  const url = (demo.lines.find((l) => l.startsWith('Switchyard demo gateway: ')) ?? '')
    .slice('Switchyard demo gateway: '.length)
    .trim();
  const agents = demo.lines.filter((l) => / (claude|opencode)$/.test(l) || l.trim().startsWith('codex '));
  assert.equal(agents.length, 3, agents.join('\n'));
  for (const line of agents) assert.ok(line.includes(url), line);
});

test('the openai client lists the fleet models', async () => {
  const ids: string[] = [];
  for await (const model of client.models.list()) ids.push(model.id);
  for (const id of ['llama-3.1-8b-instruct', 'qwen3-8b', 'llama3.2:latest', 'qwen2.5-7b-instruct', 'qwen3-coder-30b']) {
    assert.ok(ids.includes(id), `${id} in ${ids.join(', ')}`);
  }
});

test('the openai client completes a chat without streaming', async () => {
  const completion = await client.chat.completions.create({
    model: 'llama-3.1-8b-instruct',
    messages: [{ role: 'user', content: 'Say hello.' }],
  });
  assert.equal(completion.object, 'chat.completion');
  assert.ok((completion.choices[0]?.message.content ?? '').length > 0);
});

test('the openai client streams a chat chunk by chunk', async () => {
  const stream = await client.chat.completions.create({
    model: 'qwen3-8b',
    messages: [{ role: 'user', content: 'Stream a few words.' }],
    stream: true,
    max_tokens: 8,
  });
  let chunks = 0;
  let text = '';
  for await (const chunk of stream) {
    chunks += 1;
    text += chunk.choices[0]?.delta.content ?? '';
  }
  assert.ok(chunks >= 3, `got ${chunks} chunks`);
  assert.ok(text.length > 0);
});

test('the openai client gets an embedding', async () => {
  const result = await client.embeddings.create({ model: 'nomic-embed-text:latest', input: 'embed me' });
  assert.ok((result.data[0]?.embedding.length ?? 0) > 0);
});
