// Pure: a Wake-on-LAN magic packet — six 0xFF bytes, then the target MAC sixteen times (102 bytes).

export function magicPacket(mac: string): Buffer {
  const bytes = mac.split(/[:-]/).map((part) => Number.parseInt(part, 16));
  if (bytes.length !== 6 || bytes.some((b) => !Number.isInteger(b) || b < 0 || b > 255)) {
    throw new Error(`not a MAC address: ${mac}`);
  }
  const packet = Buffer.alloc(6 + 16 * 6, 0xff);
  for (let i = 0; i < 16; i++) Buffer.from(bytes).copy(packet, 6 + i * 6);
  return packet;
}
