// Pure: whether a config lets any client of this site use the sites that pin it. A forwarded
// request is signed by this site, and a pinning site serves it without asking for client keys, so
// with `[mesh]` set and `[server] api_keys` empty, whoever reaches this listener runs inference on
// every site that pins this one, counted against this site. Documented (docs/security.md), and
// said once at start (`serve`) and by `check-config`.

import type { GatewayConfig } from '#src/config/types.ts';

export const MESH_OPEN_TO_CLIENTS =
  '[mesh] is set but [server] api_keys is empty: anyone who reaches this listener can run inference on the sites that pin this one (their forwarded requests are signed by this site); set [server] api_keys';

export function meshOpenToClients(config: Pick<GatewayConfig, 'mesh' | 'server'>): boolean {
  return config.mesh !== undefined && config.server.apiKeys.length === 0;
}
