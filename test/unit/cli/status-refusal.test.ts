// `switchyard status` against a gateway that refuses the admin read for its Host (421, issue 38
// item 9): the gateway's own words (which name `[admin] hosts`) reach the operator, not a bare code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetchHostsReport, gatewayErrorMessage } from '#src/cli/status-report.ts';

test('a 421 answer is reported with the message the gateway gave', async () => {
  const body = JSON.stringify({
    error: {
      message: `the admin routes do not answer for Host 'gw.example.test' … [admin] hosts = ["gw.example.test"]`,
      code: 'unexpected_host',
    },
  });
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(421, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const answer = await fetchHostsReport(
      `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      undefined,
      AbortSignal.timeout(30_000),
    );
    assert.ok(!answer.ok);
    assert.match(
      answer.error,
      /^HTTP 421 from \/admin\/hosts: the admin routes do not answer for Host 'gw\.example\.test'.*\[admin\] hosts/,
    );
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test('only an error answer gives a message', () => {
  assert.equal(gatewayErrorMessage({ error: { message: 'why' } }), 'why');
  assert.equal(gatewayErrorMessage({ error: 'why' }), undefined);
  assert.equal(gatewayErrorMessage('text'), undefined);
});
