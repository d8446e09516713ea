// A node's wake method: a Wake-on-LAN magic packet (MAC + broadcast "host:port") or a command run
// without a shell. Checked here so a typo in a MAC fails at load, not when a GPU box must wake.
import { parseListenAddress } from './listen-address.ts';
import { invalid, valid, type ParseResult } from './parse-result.ts';
import type { WakeSpec } from './types.ts';

const MAC = /^([0-9a-f]{2})[:-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})[:-]?([0-9a-f]{2})$/i;

export function parseMac(text: string): ParseResult<string> {
  const match = MAC.exec(text.trim());
  if (match === null) return invalid('must be a MAC address like "aa:bb:cc:dd:ee:ff"');
  return valid(match.slice(1, 7).join(':').toLowerCase());
}

export interface RawWake {
  readonly mac?: string | undefined;
  readonly broadcast?: string | undefined;
  readonly command?: string[] | undefined;
}

export const DEFAULT_WOL_BROADCAST = '255.255.255.255:9';

export function parseWake(raw: RawWake): ParseResult<WakeSpec> {
  if (raw.command !== undefined && (raw.mac !== undefined || raw.broadcast !== undefined)) {
    return invalid('give either mac (with an optional broadcast) or command, not both');
  }
  if (raw.command !== undefined) {
    if (raw.command.length === 0 || raw.command[0] === '')
      return invalid('command must name a program, like ["/usr/local/bin/wake-gpu1"]');
    return valid({ kind: 'command', argv: [...raw.command] });
  }
  if (raw.mac === undefined) return invalid('needs mac = "aa:bb:cc:dd:ee:ff" (Wake-on-LAN) or command = ["/path/to/program"]');
  const mac = parseMac(raw.mac);
  if (!mac.ok) return invalid(`mac ${mac.message}`);
  const broadcast = parseListenAddress(raw.broadcast ?? DEFAULT_WOL_BROADCAST);
  if (!broadcast.ok) return invalid(`broadcast must be "address:port", like "${DEFAULT_WOL_BROADCAST}"`);
  if (broadcast.value.port === 0) return invalid('broadcast needs a real port (9 is the usual Wake-on-LAN port)');
  return valid({ kind: 'wol', mac: mac.value, broadcast: broadcast.value });
}
