// Counts the bytes gossipsub sends and receives, through the one hook it offers for that: its
// metrics register. gossipsub reports every RPC it writes or reads (published and relayed
// messages, IHAVE/IWANT/GRAFT/PRUNE control, subscriptions) to two counters; we keep those two
// and ignore its ~100 other series. The figure is the protobuf RPC size, before the length prefix
// and Noise/Yamux framing (a few percent more on the wire).

import type { AvgMinMax, Gauge, Histogram, MetricsRegister } from '@libp2p/gossipsub/metrics';

/** gossipsub's own names for the two counters (src/metrics.ts in @libp2p/gossipsub). */
const SENT = 'gossipsub_rpc_sent_bytes_total';
const RECEIVED = 'gossipsub_rpc_recv_bytes_total';

export interface ByteCounts {
  readonly bytesSent: number;
  readonly bytesReceived: number;
}

export class ByteMeter {
  #sent = 0;
  #received = 0;

  counts(): ByteCounts {
    return { bytesSent: this.#sent, bytesReceived: this.#received };
  }

  /** The register to hand gossipsub as `metricsRegister`. */
  register(): MetricsRegister {
    const add = (name: string): ((value: number) => void) => {
      if (name === SENT)
        return (value) => {
          this.#sent += value;
        };
      if (name === RECEIVED)
        return (value) => {
          this.#received += value;
        };
      return () => {};
    };
    const noop = (): void => {};
    return {
      gauge<Labels extends Record<string, string | number>>(config: { name: string }): Gauge<Labels> {
        const counted = add(config.name);
        // gossipsub calls inc(value) on unlabelled series and inc(labels, value) on labelled ones;
        // the two we keep are unlabelled. Gauge's call signature is a conditional type on Labels
        // that TypeScript cannot resolve for a generic body, hence the one cast.
        const inc = (first?: unknown, second?: unknown): void => {
          const value = typeof first === 'number' ? first : typeof second === 'number' ? second : 1;
          counted(value);
        };
        return { inc, set: noop, addCollect: noop } as unknown as Gauge<Labels>;
      },
      histogram<Labels extends Record<string, string | number>>(): Histogram<Labels> {
        return { startTimer: () => noop, observe: noop, reset: noop } as unknown as Histogram<Labels>;
      },
      avgMinMax<Labels extends Record<string, string | number>>(): AvgMinMax<Labels> {
        return { set: noop } as unknown as AvgMinMax<Labels>;
      },
    };
  }
}
