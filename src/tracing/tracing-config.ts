// The tracing settings (`[tracing]`), as the table (tracing-table.ts) produces them, and how they
// join GatewayConfig (declaration merging: config/config-table.ts).

declare module '#src/config/types.ts' {
  interface GatewayConfig {
    /** `[tracing]`: OpenTelemetry traces; undefined = off (no SDK loaded). */
    readonly tracing?: TracingConfig | undefined;
  }
}

export interface TracingConfig {
  /** Where spans go: an OTLP/HTTP traces URL (`http://collector:4318/v1/traces`), JSON encoded. */
  readonly otlpEndpoint: string;
  /** The resource's `service.name`. */
  readonly serviceName: string;
  /** The share of new traces recorded, 0 to 1 (by trace id; a forward from a pinned site follows its sender). */
  readonly sampleRatio: number;
}
