// What a caller gives a gateway to start, and what a reload answers. They live here, beside the
// parts that read them, so the composition root (main.ts) depends on gateway/ and never the reverse.

import type { Writable } from 'node:stream';
import type { Logger } from 'pino';
import type { Clock } from '#src/core/clock.ts';
import type { ConfigProblem, GatewayConfig, LoadResult } from '#src/config/types.ts';
import type { MeshTransportFactory } from '#src/mesh/index.ts';
import type { SiteKey } from '#src/mesh/site-key.ts';
import type { MeshLink } from '#src/mesh/forwarding/index.ts';
import type { StateWriteFaults } from '#src/state/index.ts';

export interface GatewayOptions {
  readonly config: GatewayConfig;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** The selection policies' random source, uniform in [0, 1); absent = Math.random. */
  readonly random?: () => number;
  /** Re-reads the config for SIGHUP and POST /admin/reload; absent = reload unsupported. */
  readonly loadConfig?: () => Promise<LoadResult>;
  /** Federation gossip: the site key codec and the transport (used only with `[mesh]`). */
  readonly meshGossip?: MeshOptions;
  /**
   * Federation's link for the request path (forwarding to other sites, accepting forwarded
   * requests); absent = alone. Built from `[mesh]`, the site key and the mesh's site store.
   */
  readonly mesh?: MeshLink | undefined;
  /** Where `[log] requests = "stdout"` writes; absent = process.stdout. */
  readonly requestLogStdout?: Writable | undefined;
  /** Tests: make the state file's writes fail as a full disk would (src/state/state-db.ts); absent = none. */
  readonly stateFaults?: StateWriteFaults | undefined;
}

export type ReloadOutcome = { readonly ok: true } | { readonly ok: false; readonly problems: readonly ConfigProblem[] };

/** How a gateway with `[mesh]` gets its site key and its gossip transport. */
export interface MeshOptions {
  /** The site key; absent = read from `[mesh] key_file` at start. */
  readonly key?: SiteKey;
  /** Builds the transport; absent = libp2p gossipsub with the site key (tests inject the memory bus). */
  readonly transport?: MeshTransportFactory;
  /**
   * The mesh state file (highest accepted revisions); absent = `<key_file>.state.json` when the key
   * is read from key_file, none when `key` is given; false = none.
   */
  readonly stateFile?: string | false;
  /**
   * When this run's replay memory is taken to have begun (wall-clock ms); absent = at start. A
   * forward an earlier run could have accepted is refused (mesh/forwarding/replay-window.ts), so
   * forwards are taken from `max_clock_skew` after start; tests that federate at once set it earlier.
   */
  readonly replaySinceMs?: number;
  /**
   * The replay record, which carries the replay memory across a clean restart
   * (mesh/forwarding/replay-record.ts); absent = `<peer_key_file or key_file>.replay.json` when the
   * key is read from key_file and `replaySinceMs` is not set (none under [cluster] without
   * peer_key_file: replicas would share it), none otherwise; false = none (the blackout rule at
   * every start).
   */
  readonly replayFile?: string | false;
}
