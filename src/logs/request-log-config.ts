// The request log's settings (`[log]`), as the table (request-log-table.ts) produces them, and how
// they join GatewayConfig (declaration merging: config/config-table.ts).

declare module '#src/config/types.ts' {
  interface GatewayConfig {
    /** `[log]`: the request log; undefined (a config built in code) = off. */
    readonly log?: LogConfig | undefined;
  }
}

/** Where request lines go: nowhere, standard output, or a file. */
export type RequestLogTarget =
  { readonly kind: 'off' } | { readonly kind: 'stdout' } | { readonly kind: 'file'; readonly path: string };

export interface LogConfig {
  readonly requests: RequestLogTarget;
  /** A file is rotated once it would grow past this (`requests_max_bytes`). */
  readonly requestsMaxBytes: number;
  /** Rotated files kept beside it: PATH.1 (newest) … PATH.N (`requests_keep`; 0 = the full file is truncated). */
  readonly requestsKeep: number;
  /** Lines held in memory while the disk is slow; beyond, lines are dropped and counted (`requests_buffer_lines`). */
  readonly requestsBufferLines: number;
  /** `bodies`: the prompt's text goes into each line (sensitive; off by default), at most `bodiesMaxBytes` of it. */
  readonly bodies: boolean;
  readonly bodiesMaxBytes: number;
}
