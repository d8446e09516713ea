// Pure: who gets a live-feed slot, and who is dropped for not reading. The feed's slots are few
// (MAX_FEED_CLIENTS); without these rules 32 clients that connect and never read hold all of them
// and the operator gets 503. Slots are shared by client address: one address holds at most
// MAX_FEEDS_PER_ADDRESS, and when the feed is full a newcomer from an address holding fewer than
// the busiest one takes that address's oldest slot. A client whose unsent bytes stay above
// FEED_STALL_BYTES for FEED_STALL_MS is not draining: it is dropped (a browser reconnects by itself).

export const MAX_FEED_CLIENTS = 32;
/** Feeds one client address may hold: a few tabs of one operator; a flood from one host holds no more. */
export const MAX_FEEDS_PER_ADDRESS = 4;
/** Unsent bytes above this mean the client is not keeping up... */
export const FEED_STALL_BYTES = 64 * 1024;
/** ...and staying above it this long means it does not drain: dropped. */
export const FEED_STALL_MS = 10_000;

export interface FeedSlot {
  readonly address: string;
}

export type Admission =
  | { readonly kind: 'admit' }
  /** Admitted in place of `victim` (an index into the slots, oldest first), which is closed. */
  | { readonly kind: 'admit_replacing'; readonly victim: number }
  | { readonly kind: 'refuse'; readonly reason: string };

/** `slots` oldest first. */
export function admitFeed(slots: readonly FeedSlot[], address: string): Admission {
  const counts = new Map<string, number>();
  for (const slot of slots) counts.set(slot.address, (counts.get(slot.address) ?? 0) + 1);
  const own = counts.get(address) ?? 0;
  if (own >= MAX_FEEDS_PER_ADDRESS) {
    return {
      kind: 'refuse',
      reason: `this address already holds ${own} live feeds (at most ${MAX_FEEDS_PER_ADDRESS} per client address); close a tab`,
    };
  }
  if (slots.length < MAX_FEED_CLIENTS) return { kind: 'admit' };
  let busiest = '';
  let most = 0;
  for (const [other, count] of counts) {
    if (count > most) {
      busiest = other;
      most = count;
    }
  }
  if (most > own + 1) return { kind: 'admit_replacing', victim: slots.findIndex((slot) => slot.address === busiest) };
  return {
    kind: 'refuse',
    reason: `the live feed already has ${MAX_FEED_CLIENTS} clients, shared evenly between client addresses`,
  };
}

/** When a client started to lag (undefined: keeping up), given its unsent bytes now. */
export function lagSince(previous: number | undefined, unsentBytes: number, now: number): number | undefined {
  if (unsentBytes <= FEED_STALL_BYTES) return undefined;
  return previous ?? now;
}

/** Whether a client lagging since `since` has failed to drain for too long. */
export function isStalled(since: number | undefined, now: number): boolean {
  return since !== undefined && now - since >= FEED_STALL_MS;
}

/**
 * The address a feed counts against: an IPv4 address (an IPv4-mapped IPv6 one too) as it is; an
 * IPv6 address by its /64, the block one host is routinely given (else one host has 2^64 addresses).
 */
export function feedAddressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1] !== undefined) return mapped[1];
  if (!address.includes(':')) return address;
  const [head = '', tail = ''] = address.split('%')[0]?.split('::') ?? [];
  const left = head === '' ? [] : head.split(':');
  const right = address.includes('::') ? (tail === '' ? [] : tail.split(':')) : [];
  const groups = address.includes('::')
    ? [...left, ...Array.from({ length: Math.max(0, 8 - left.length - right.length) }, () => '0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => (Number.parseInt(g, 16) || 0).toString(16))
    .join(':')}::/64`;
}
