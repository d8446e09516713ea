// libp2p addresses in `[mesh] listen` and `[mesh] peers`, checked with the multiaddr library the
// transport itself uses, so a config that loads is one libp2p can dial. A peer address must end in
// /p2p/<peer id>: Noise then proves the dialled peer holds that key, and a bare host:port could be
// anyone. Site keys are Ed25519, so a peer id of another key type cannot be a site.
// The two libraries (and the libp2p crypto under them) load the first time a [mesh] address is
// checked, not with the config loader: a config without [mesh], `check-config` of one, or
// `status`, never loads them (docs/performance.md, "Lean process").

import { createRequire } from 'node:module';
import { invalid, valid, type ParseResult } from '#src/config/parse-result.ts';

const load = createRequire(import.meta.url);
const multiaddr = (text: string): ReturnType<typeof import('@multiformats/multiaddr').multiaddr> =>
  (load('@multiformats/multiaddr') as typeof import('@multiformats/multiaddr')).multiaddr(text);
const peerIdFromString = (text: string): ReturnType<typeof import('@libp2p/peer-id').peerIdFromString> =>
  (load('@libp2p/peer-id') as typeof import('@libp2p/peer-id')).peerIdFromString(text);

const EXAMPLE = '"/ip4/10.0.0.7/tcp/4001/p2p/12D3KooW..."';

export function parseListenMultiaddr(text: string): ParseResult<string> {
  const components = readComponents(text);
  if (!components.ok) return components;
  if (!components.value.some((part) => part.name === 'tcp'))
    return invalid('must be a TCP multiaddr, like "/ip4/0.0.0.0/tcp/4001"');
  if (components.value.some((part) => part.name === 'p2p'))
    return invalid('must not name a peer id (/p2p/...): this site listens with its own key');
  return valid(text);
}

export function parsePeerMultiaddr(text: string): ParseResult<string> {
  const components = readComponents(text);
  if (!components.ok) return components;
  const last = components.value.at(-1);
  if (last?.name !== 'p2p' || last.value === undefined)
    return invalid(`must end in /p2p/<peer id> (the peer id switchyard keygen printed for that site), like ${EXAMPLE}`);
  try {
    if (peerIdFromString(last.value).type !== 'Ed25519')
      return invalid('must name an Ed25519 peer id (12D3KooW...): site keys are Ed25519');
  } catch {
    return invalid(`has a /p2p/ part that is not a peer id, like ${EXAMPLE}`);
  }
  return valid(text);
}

/** A bare libp2p peer id (`[mesh] allowed_peers`), as `switchyard keygen` prints it or libp2p logs it. */
export function parsePeerId(text: string): ParseResult<string> {
  try {
    return valid(peerIdFromString(text).toString());
  } catch {
    return invalid('must be a libp2p peer id, like "12D3KooW..." (a /p2p/ address belongs in [mesh] peers)');
  }
}

function readComponents(text: string): ParseResult<readonly { readonly name: string; readonly value?: string | undefined }[]> {
  try {
    return valid(multiaddr(text).getComponents());
  } catch (error) {
    return invalid(`is not a multiaddr (${error instanceof Error ? error.message : 'unreadable'}), like ${EXAMPLE}`);
  }
}
