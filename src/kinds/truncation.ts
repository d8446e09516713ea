// Pure: whether a node cuts an overlong prompt silently instead of refusing it, from its configured
// kind and how it answered (a node that answered /props is a llama-server, which refuses).

import type { NodeKind } from '#src/config/types.ts';
import { serverKind } from './registry.ts';
import type { ServerRole } from './server-kind.ts';

export function truncatesSilently(kind: NodeKind, role: ServerRole): boolean {
  return role === 'unknown' && serverKind(kind).silentlyTruncates;
}
