// `[server] cors_origins`: off by default, "*" or a list of origins written as browsers send them;
// anything else is a problem at its key path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '#src/config-tables.ts';

const ONE_NODE = '[[nodes]]\nname = "gpu-a"\nurl = "http://10.0.0.5:8000"\n';
const load = (value: string | undefined) =>
  loadConfig(`[server]\n${value === undefined ? '' : `cors_origins = ${value}`}\n${ONE_NODE}`, {});

test('accepted values', () => {
  const table: [string | undefined, unknown][] = [
    [undefined, []],
    ['[]', []],
    ['"*"', '*'],
    ['["https://chat.example.com"]', ['https://chat.example.com']],
    [
      '["http://localhost:5173", "https://a.example:8443", "http://[::1]:3000"]',
      ['http://localhost:5173', 'https://a.example:8443', 'http://[::1]:3000'],
    ],
  ];
  for (const [value, expected] of table) {
    const result = load(value);
    assert.ok(result.ok, `${value}: ${JSON.stringify(result)}`);
    assert.deepEqual(result.config.server.corsOrigins, expected, String(value));
  }
});

test('refused values name their key path and what to write', () => {
  const table: [string, string, RegExp][] = [
    ['"https://chat.example.com"', 'server.cors_origins', /must be "\*" \(every origin\) or an array of origins/],
    ['true', 'server.cors_origins', /must be "\*" \(every origin\) or an array of origins/],
    ['["https://chat.example.com/"]', 'server.cors_origins[0]', /exactly as browsers send it: "https:\/\/chat\.example\.com"/],
    ['["https://Chat.Example.com"]', 'server.cors_origins[0]', /"https:\/\/chat\.example\.com"/],
    ['["https://chat.example.com:443"]', 'server.cors_origins[0]', /default port left out/],
    ['["https://a.example", "https://b.example/app"]', 'server.cors_origins[1]', /no path/],
    ['["chat.example.com"]', 'server.cors_origins[0]', /must be an origin such as/],
    ['["ftp://files.example"]', 'server.cors_origins[0]', /http or https/],
    ['["*"]', 'server.cors_origins[0]', /write cors_origins = "\*"/],
    ['["null"]', 'server.cors_origins[0]', /"null" origin/],
    ['["https://a.example", "https://a.example"]', 'server.cors_origins[1]', /listed twice/],
    ['[1]', 'server.cors_origins[0]', /must be an origin such as/],
  ];
  for (const [value, path, message] of table) {
    const result = load(value);
    assert.ok(!result.ok, value);
    const problem = result.problems.find((p) => p.path === path);
    assert.ok(problem !== undefined, `${value}: ${JSON.stringify(result.problems)}`);
    assert.match(problem.message, message, value);
  }
});
