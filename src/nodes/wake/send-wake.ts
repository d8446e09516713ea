// I/O: deliver a wake — a UDP magic packet to the broadcast address, or the operator's command run
// without a shell (argv as given), bounded in time. Never throws; says what went wrong.

import { createSocket } from 'node:dgram';
import { execFile } from 'node:child_process';
import { isIPv6 } from 'node:net';
import type { WakeSpec } from '#src/config/types.ts';
import { magicPacket } from './magic-packet.ts';

/** `elsewhere`: another replica sent this window's wake ([cluster]); nothing was sent from here. */
export type WakeDelivery = { readonly ok: true; readonly elsewhere?: boolean } | { readonly ok: false; readonly error: string };

const COMMAND_TIMEOUT_MS = 30_000;
const COMMAND_OUTPUT_BYTES = 64 * 1024;

export function sendWake(spec: WakeSpec): Promise<WakeDelivery> {
  return spec.kind === 'wol' ? sendMagicPacket(spec.mac, spec.broadcast.host, spec.broadcast.port) : runWakeCommand(spec.argv);
}

function sendMagicPacket(mac: string, host: string, port: number): Promise<WakeDelivery> {
  return new Promise((resolve) => {
    const socket = createSocket(isIPv6(host) ? 'udp6' : 'udp4');
    const done = (result: WakeDelivery): void => {
      socket.close();
      resolve(result);
    };
    socket.once('error', (error) => done({ ok: false, error: `magic packet to ${host}:${port}: ${error.message}` }));
    socket.bind(0, () => {
      socket.setBroadcast(true);
      socket.send(magicPacket(mac), port, host, (error) =>
        done(error ? { ok: false, error: `magic packet to ${host}:${port}: ${error.message}` } : { ok: true }),
      );
    });
  });
}

function runWakeCommand(argv: readonly string[]): Promise<WakeDelivery> {
  const [program, ...args] = argv;
  if (program === undefined) return Promise.resolve({ ok: false, error: 'empty wake command' });
  return new Promise((resolve) => {
    execFile(program, args, { timeout: COMMAND_TIMEOUT_MS, maxBuffer: COMMAND_OUTPUT_BYTES, shell: false }, (error) => {
      if (error === null) resolve({ ok: true });
      else resolve({ ok: false, error: `wake command ${program} failed: ${error.message.split('\n')[0] ?? ''}` });
    });
  });
}
