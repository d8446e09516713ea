// How a gateway with `[mesh]` gets its site key and its gossip transport (tests inject both), and
// where it keeps its replay record: the caller's options, beside `[mesh]` in the config.

import type { MeshTransportFactory } from './transport.ts';
import type { SiteKey } from './site-key.ts';

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
