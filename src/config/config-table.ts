// A feature's config table (issue 39, docs/design.md "A feature's config table"): the one thing a
// feature gives the config loader, so that a new feature's `[table]` lives in the feature's own
// folder and src/config/ never names it. config/ is below every feature (features import it), so it
// cannot import their tables: the list of tables lives above both (src/config-tables.ts) and is
// handed to the loader (configLoader), to the restart check (restartOnlyChanges) and to
// check-config's summary. The table's loaded type joins GatewayConfig by declaration merging, from
// the feature's folder:
//
//   declare module '#src/config/types.ts' {
//     interface GatewayConfig { readonly tracing?: TracingConfig | undefined }
//   }
//
// A table file imports zod and config/ only (never the feature's runtime code): check-config and
// `serve` read every table before anything else starts.

import type { z } from 'zod';
import type { EnvVars } from './api-key.ts';
import type { NameClash } from './name-clashes.ts';
import type { RawTable } from './raw-document.ts';
import type { ParseResult } from './parse-result.ts';
import type { GatewayConfig, OwnTableKey } from './types.ts';

/** Reads a secret file's text (a tenant's `file:` keys), or says why it cannot (the loader's only read besides the config). */
export type SecretFileReader = (path: string) => ParseResult<string>;

/** What a table's schema and checks may resolve secrets with (the loader does no other I/O). */
export interface TableSecrets {
  readonly env: EnvVars;
  readonly readFile: SecretFileReader;
}

/** A warning about a valid config: check-config prints `warning: <message>`; `serve` logs it once at start with `fields`. */
export interface ConfigWarning {
  readonly message: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

/** The keys of GatewayConfig a feature's table may take: every one but the gateway's own tables'. */
export type FeatureTableKey = Exclude<keyof GatewayConfig, OwnTableKey>;

export interface ConfigTable<Key extends FeatureTableKey = FeatureTableKey> {
  /** The table's TOML name, and its key in GatewayConfig (`[mesh]` → `config.mesh`, `[[tenants]]` → `config.tenants`). */
  readonly name: Key & string;
  /**
   * The table as written → its loaded value (camelCase, ms, bytes), with its defaults: `.optional()`
   * for a table whose absence turns the feature off, `.default(…)`/`.prefault({})` for one that is
   * always there. Strict like every table (config/schema-parts.ts `table`).
   */
  schema(secrets: TableSecrets): z.ZodType<GatewayConfig[Key]>;
  /** After every table parsed: its final value given the rest of the config (the tenants add `[server] api_keys` as `default`). */
  complete?(value: GatewayConfig[Key], config: GatewayConfig): GatewayConfig[Key];
  /**
   * Its checks against the rest of the document as written (duplicates, references between tables),
   * run beside the schema so that one run reports every problem; paths from the document's root.
   */
  crossChecks?(document: RawTable, secrets: TableSecrets): readonly NameClash[];
  /** check-config's lines for it, as the gateway would run it (never a secret: only whether one is set). */
  summary(config: GatewayConfig): readonly string[];
  /** Warnings about a valid config (check-config and `serve` say them). */
  warnings?(config: GatewayConfig): readonly ConfigWarning[];
  /** The key paths of it a reload cannot apply (`mesh.site`, or `cluster` for the whole table): a restart is needed. */
  restartOnly?(previous: GatewayConfig, next: GatewayConfig): readonly string[];
}

/** The feature tables as one list's element type (each keeps its own key's type where it is declared). */
export type AnyConfigTable = { [Key in FeatureTableKey]-?: ConfigTable<Key> }[FeatureTableKey];
