// `host:port` for the gateway's own listener. IPv6 hosts are bracketed ("[::1]:8080") so the last
// colon unambiguously starts the port; the brackets are dropped from `host` (node:http wants them off).
import { isIPv6 } from 'node:net';
import type { ListenAddress } from './types.ts';
import { invalid, valid, type ParseResult } from './parse-result.ts';

const EXPECTED = 'must be "host:port", like "127.0.0.1:8080", "0.0.0.0:8080" or "[::1]:8080"';
const HOSTNAME = /^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$/;
const MAX_PORT = 65_535;

export function parseListenAddress(text: string): ParseResult<ListenAddress> {
  const colon = text.lastIndexOf(':');
  if (colon < 0) return invalid(`${EXPECTED}; the port is missing`);
  const hostPart = text.slice(0, colon);
  const portPart = text.slice(colon + 1);
  const port = parsePort(portPart);
  if (port === undefined) return invalid(`${EXPECTED}; the port must be a number from 0 to ${MAX_PORT}`);
  if (hostPart === '') return invalid(`${EXPECTED}; the host is missing (use 0.0.0.0 or [::] for every interface)`);
  if (hostPart.startsWith('[') && hostPart.endsWith(']')) {
    const host = hostPart.slice(1, -1);
    return isIPv6(host) ? valid({ host, port }) : invalid(`${EXPECTED}; the bracketed host is not an IPv6 address`);
  }
  if (hostPart.includes(':')) return invalid(`${EXPECTED}; put an IPv6 host in brackets`);
  if (!HOSTNAME.test(hostPart)) return invalid(`${EXPECTED}; the host is not a valid hostname or IP address`);
  return valid({ host: hostPart, port });
}

function parsePort(text: string): number | undefined {
  if (!/^\d{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port <= MAX_PORT ? port : undefined;
}

/** The inverse of parseListenAddress, for logs and summaries. */
export function formatListenAddress(address: ListenAddress): string {
  return address.host.includes(':') ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}
