// Issue 10, item 1: a request-target that llhttp accepts but the WHATWG URL parser rejects
// (`//[/`, `//a:99999/`, `http://[/`, `//%/`) threw `TypeError: Invalid URL` outside any try, as an
// unhandled rejection that ended the gateway process (and the simulator's, so `demo` died too).
// Now both answer 400 and keep serving.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFleetConfig, startFleet, type Fleet } from '#src/sim/index.ts';
import { rawRequest, startInProcessGateway, type InProcessGateway } from '#test/fixtures/in-process.ts';
import { httpJson } from '#test/fixtures/http.ts';

const MALFORMED = ['//[/', '//a:99999/', 'http://[/', '//%/', 'http://a:99999/v1/models', '*'];

let fleet: Fleet;
let open: InProcessGateway;
let guarded: InProcessGateway;

before(async () => {
  const spec = parseFleetConfig('[[node]]\nname = "a"\nkind = "vllm"\nmodels = ["m"]\n');
  if (!spec.ok) throw new Error('bad fleet');
  fleet = await startFleet(spec.spec, { host: '127.0.0.1' });
  const nodes = `[[nodes]]\nname = "a"\nurl = "${fleet.nodes[0]!.url}"\nkind = "vllm"\n`;
  open = await startInProcessGateway(`[server]\nlisten = "127.0.0.1:0"\n${nodes}`);
  guarded = await startInProcessGateway(
    `[server]\nlisten = "127.0.0.1:0"\napi_keys = ["client-key"]\n[admin]\ntoken = "admin-token"\n${nodes}`,
  );
});

after(async () => {
  await open?.close();
  await guarded?.close();
  await fleet?.close();
});

for (const target of MALFORMED) {
  test(`request-target ${target}: 400 from the gateway (open and guarded) and the sim, and all keep serving`, async () => {
    for (const gw of [open, guarded]) {
      const answer = await rawRequest(gw.url, `GET ${target} HTTP/1.1\r\nhost: x`);
      assert.match(answer.statusLine, /^HTTP\/1\.1 400 /, answer.text);
      assert.match(answer.text, /malformed request target/);
      assert.equal((await httpJson('GET', `${gw.url}/health`)).status, 200, 'the gateway still serves');
    }
    const sim = await rawRequest(fleet.nodes[0]!.url, `GET ${target} HTTP/1.1\r\nhost: x`);
    assert.match(sim.statusLine, /^HTTP\/1\.1 400 /, sim.text);
    assert.equal((await httpJson('GET', `${fleet.nodes[0]!.url}/v1/models`)).status, 200, 'the sim still serves');
  });
}

test('an absolute-form target for a real path is served like its origin form', async () => {
  const answer = await rawRequest(open.url, 'GET http://anything.invalid/health HTTP/1.1\r\nhost: x');
  assert.match(answer.statusLine, /^HTTP\/1\.1 200 /);
});
