// `[admin] hosts`: the DNS names the admin routes answer for besides IP addresses and localhost;
// empty by default, names only (lowercased), anything else a problem at its key path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '#src/config-tables.ts';

const ONE_NODE = '[[nodes]]\nname = "gpu-a"\nurl = "http://10.0.0.5:8000"\n';
const load = (value: string | undefined) =>
  loadConfig(`[admin]\n${value === undefined ? '' : `hosts = ${value}`}\n${ONE_NODE}`, {});

test('accepted values', () => {
  const table: [string | undefined, unknown][] = [
    [undefined, []],
    ['[]', []],
    ['["gw.example.com"]', ['gw.example.com']],
    ['["GW.Example.com.", "switchyard", "gpu-box-7.lan"]', ['gw.example.com', 'switchyard', 'gpu-box-7.lan']],
  ];
  for (const [value, expected] of table) {
    const result = load(value);
    assert.ok(result.ok, `${value}: ${JSON.stringify(result)}`);
    assert.deepEqual(result.config.admin.hosts, expected, String(value));
  }
});

test('refused values name their key path and what to write', () => {
  const table: [string, string, RegExp][] = [
    ['"gw.example.com"', 'admin.hosts', /must be an array of names/],
    ['["https://gw.example.com"]', 'admin.hosts[0]', /leave out the scheme/],
    ['["gw.example.com:8443"]', 'admin.hosts[0]', /leave out the port/],
    ['["gw.example.com/admin"]', 'admin.hosts[0]', /a DNS name such as/],
    ['["10.0.0.2"]', 'admin.hosts[0]', /IP addresses are always answered/],
    ['["[::1]"]', 'admin.hosts[0]', /IP addresses are always answered/],
    ['["localhost"]', 'admin.hosts[0]', /localhost names are always answered/],
    ['["*.example.com"]', 'admin.hosts[0]', /a DNS name such as/],
    ['[""]', 'admin.hosts[0]', /a DNS name such as/],
    ['["a.example", "A.example"]', 'admin.hosts[1]', /listed twice/],
    ['[1]', 'admin.hosts[0]', /a DNS name such as/],
  ];
  for (const [value, path, message] of table) {
    const result = load(value);
    assert.ok(!result.ok, value);
    const problem = result.problems.find((p) => p.path === path);
    assert.ok(problem, `${value}: ${JSON.stringify(result.problems)}`);
    assert.match(problem.message, message, value);
  }
});
