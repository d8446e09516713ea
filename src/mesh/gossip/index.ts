// Public surface of the gossip transport (libp2p + gossipsub); other folders import only from here.

export { Libp2pTransport, type Libp2pTransportOptions, type TransportEvents } from './libp2p-transport.ts';
export { DEFAULT_REDIAL, redialDelayMs, type BackoffPolicy } from './backoff.ts';
export { parsePeerAddress, type DialTarget, type DialerEvents } from './peer-dialer.ts';
export { gossipTransportFactory, type GossipFactoryDeps } from './factory.ts';
