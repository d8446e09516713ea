// Issue 21, item 1: what the fleet teaches. Each answer's usage.prompt_tokens against the prompt's
// bytes gives the node's bytes per token for the model; /admin/hosts shows it, /admin/explain
// sizes a prompt with it, and it tightens the bounds: once learned, a prompt several times past
// every context is refused by the gateway itself (no tokenizer answers here), while prompts that
// fit are still served. The same with `[server] workers = 2`, where workers report what they learn.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { eventually, httpJson, setSimFaults, simRequests } from '#test/fixtures/http.ts';
import { hostOf, waitForHost } from '#test/fixtures/context.ts';
import { chatOfLanguage } from '#test/fixtures/prompt-languages.ts';
import { TOKEN_RATIO_MIN_SAMPLES } from '#src/capacity/index.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges, requestEnds } from '#test/fixtures/gateway-waits.ts';

const FLEET = `
[[node]]
name = "vllm"
kind = "vllm"
models = ["m"]
context = 4096
ttft = "1ms"
tokens_per_second = 5000
`;

for (const workers of [1, 2]) {
  describe(`workers = ${workers}`, () => {
    let sim: SimFleet;
    let gw: GatewayUnderTest;

    before(async () => {
      sim = await startSimFleet(FLEET);
      await setSimFaults(sim.url('vllm'), { tokenize: 'hang' });
      gw = await startGateway(
        gatewayToml(
          [{ name: 'vllm', url: sim.url('vllm'), kind: 'vllm' }],
          '[routing]\ntokenize_timeout = "100ms"',
          workers > 1 ? `workers = ${workers}` : '',
        ),
      );
      await waitForHost(gw, 'vllm', (h) => h.models?.m?.n_ctx === 4096, 'context known');
    });

    after(async () => {
      await gw?.close();
      await sim?.close();
    });

    test('answers teach the ratio; hosts and explain show it', async () => {
      for (let i = 0; i < TOKEN_RATIO_MIN_SAMPLES; i++) {
        const res = await httpJson(
          'POST',
          `${gw.url}/v1/chat/completions`,
          chatOfLanguage('m', i % 2 === 0 ? 'english' : 'cjk', 1000 + i, { max_tokens: 4 }).body,
        );
        assert.equal(res.status, 200, res.text);
      }
      await untilEvent(
        async () => (await hostOf(gw.url, 'vllm')).bytes_per_token?.m?.in_use === true,
        [requestEnds(gw), nodeChanges(gw)],
        'the ratio in use',
      );
      const ratio = (await hostOf(gw.url, 'vllm')).bytes_per_token?.m;
      assert.ok(ratio !== undefined && ratio.samples === TOKEN_RATIO_MIN_SAMPLES, JSON.stringify(ratio));
      // English runs near 3.5 bytes per simulated token, CJK near 3.
      assert.ok(ratio.low > 2.5 && ratio.low < 3.2 && ratio.high > 3.3 && ratio.high < 4, JSON.stringify(ratio));
      const explained = await gw.explain('model=m&prompt_bytes=20000');
      assert.ok(explained.bytes_per_token !== null);
      assert.ok(
        explained.prompt_tokens !== null && explained.prompt_tokens < 20_000,
        `upper bound tightened: ${explained.prompt_tokens}`,
      );
      assert.ok(
        explained.prompt_tokens_at_least !== null && explained.prompt_tokens_at_least > 20_000 / 256,
        `lower bound tightened: ${explained.prompt_tokens_at_least}`,
      );
    });

    test('with the ratio learned, a prompt far past every context is refused without asking the node; one that fits is served', async () => {
      const far = chatOfLanguage('m', 'english', 4 * 4096, { max_tokens: 4 });
      const asked = async (): Promise<number> =>
        (await simRequests(sim.url('vllm'))).filter((r) => r.path === '/v1/chat/completions').length;
      // A worker reads the fleet from the owner's pushes (every 100 ms): until its copy has the ratio,
      // the node is asked and refuses (also a 400). Poll until the gateway answers alone.
      let res = await httpJson('POST', `${gw.url}/v1/chat/completions`, far.body);
      await eventually(
        async () => {
          const before = await asked();
          res = await httpJson('POST', `${gw.url}/v1/chat/completions`, far.body);
          return res.status === 400 && (await asked()) === before;
        },
        5_000,
        'refused without asking the node',
      );
      assert.match(res.json<{ error: { message: string } }>().error.message, /needs at least \d+ tokens/);
      const fits = await httpJson(
        'POST',
        `${gw.url}/v1/chat/completions`,
        chatOfLanguage('m', 'code', 3800, { max_tokens: 4 }).body,
      );
      assert.equal(fits.status, 200, fits.text);
    });
  });
}
