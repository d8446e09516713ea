import { test } from 'node:test';
import assert from 'node:assert/strict';
import { meshOpenToClients } from '#src/mesh/config/mesh-exposure.ts';
import type { MeshConfig } from '#src/mesh/config/mesh-config.ts';

test('meshOpenToClients: [mesh] set and no client API keys (table)', () => {
  const mesh = { site: 'a' } as MeshConfig;
  const table: { mesh: MeshConfig | undefined; apiKeys: string[]; open: boolean }[] = [
    { mesh, apiKeys: [], open: true },
    { mesh, apiKeys: ['k'], open: false },
    { mesh: undefined, apiKeys: [], open: false },
    { mesh: undefined, apiKeys: ['k'], open: false },
  ];
  for (const row of table) {
    const config = { mesh: row.mesh, server: { apiKeys: row.apiKeys } } as unknown as Parameters<typeof meshOpenToClients>[0];
    assert.equal(meshOpenToClients(config), row.open, JSON.stringify(row));
  }
});
