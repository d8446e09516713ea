// Issue 42, check-config time: zod's every entry point re-exports its 60-odd locales, 62 of the
// ~95 modules it loaded in every command that reads a config (check-config, serve). The entry shim
// (bin/zod-english-only.js) resolves that re-export to English only, the locale zod's messages use.
// Checked by what a spawned CLI loads (an import trace) and by the message a bad config still gets,
// not by a timing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml, writeTempFile } from '#test/fixtures/processes.ts';
import { loadedBy } from '#test/fixtures/loaded-modules.ts';

const locales = (urls: readonly string[]): string[] => urls.filter((u) => u.includes('/node_modules/zod/v4/locales/'));

test('check-config loads zod’s English locale and no other', async () => {
  const file = await writeTempFile('switchyard.toml', gatewayToml([{ name: 'a', url: 'http://127.0.0.1:1', kind: 'vllm' }]));
  try {
    const { urls, code } = await loadedBy(['check-config', file.path]);
    assert.equal(code, 0);
    assert.ok(
      urls.some((u) => u.includes('/node_modules/zod/')),
      'the config was validated with zod',
    );
    assert.deepEqual(
      locales(urls).map((u) => u.slice(u.lastIndexOf('/') + 1)),
      ['en.js'],
    );
  } finally {
    await file.cleanup();
  }
});

test('a config zod refuses still gets zod’s English message', async () => {
  const file = await writeTempFile('switchyard.toml', '[server]\nlisten = 5\n');
  try {
    const { code, stderr } = await loadedBy(['check-config', file.path]);
    assert.equal(code, 1);
    assert.match(stderr, /server\.listen/);
    assert.match(stderr, /\bmust be\b|\bexpected\b|\binvalid\b/i);
  } finally {
    await file.cleanup();
  }
});
