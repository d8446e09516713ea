// A feature's own fields on a finished request (issue 39): its request half sets them on the
// request's report under the feature's name, the report carries them on `proxy:request-finished`
// as plain data (they cross to the owner thread with the event), and its control-plane half says
// what they mean: its fields in the request log's line (and /admin/requests' record), and what its
// per-request series count. The report, the request log and the metrics name no feature: they
// carry and place what each feature says of its own fields. A request no feature set a field on
// carries none (`fields` absent): nothing of this runs for it.

/** Each feature's fields of one request, by the feature's name; plain data (structured-cloned across threads). */
export type RequestFields = Readonly<Record<string, unknown>>;

/** The name a feature sets its fields under, typed by what it sets there. */
export interface FieldKey<T> {
  readonly name: string;
  /** Never read: carries T. */
  readonly type?: T;
}

export const fieldKey = <T>(name: string): FieldKey<T> => Object.freeze({ name });

/** A feature's own fields of a request (undefined = it set none). */
export function fieldOf<T>(fields: RequestFields | undefined, key: FieldKey<T>): T | undefined {
  return fields?.[key.name] as T | undefined;
}

/** The fields `fields` with `key`'s set to `value` (a new object: a report's fields may be shared, frozen, by every request of a caller). */
export function withField<T>(fields: RequestFields | undefined, key: FieldKey<T>, value: T): RequestFields {
  return { ...fields, [key.name]: value };
}

/** What a feature reads of a finished request beside its own fields (a plain-data part of `proxy:request-finished`). */
export interface FinishedRequest {
  readonly endpoint: string;
  /** A bounded label value. */
  readonly model: string;
  readonly node: string | undefined;
  readonly status: number;
  readonly fields?: RequestFields | undefined;
}

/** Where a feature's fields go in the request log's line: just after, or just before, one of the line's own fields. */
export type LinePlace = { readonly after: string } | { readonly before: string };

/** What a feature says of its own fields of finished requests (Feature.reports, src/core/feature.ts). */
export interface FeatureReports<T = unknown> {
  /** The name its request half sets its fields under. */
  readonly key: FieldKey<T>;
  /** Its fields in the request log's line and /admin/requests' record, at `place` (plain figures: never a secret). */
  readonly line?: { readonly place: LinePlace; readonly fields: (own: T) => Readonly<Record<string, unknown>> };
  /** Each finished request that carries its fields, as the metrics count it (its series: registered by Feature.metrics). */
  readonly finished?: ((own: T, request: FinishedRequest) => void) | undefined;
}

/** A feature's reports typed by its own fields, as the table holds them (the table hands each only its own). */
export const featureReports = <T>(reports: FeatureReports<T>): FeatureReports => reports as unknown as FeatureReports;

/** The features' reports in the feature list's order, by name: their fields are placed and observed in that order. */
export type ReportsTable = ReadonlyMap<string, FeatureReports>;

export const NO_REPORTS: ReadonlyMap<string, FeatureReports> = new Map();

/** The table of the features' reports (a later feature's of the same name replaces an earlier one's). */
export function reportsTable(reports: readonly (FeatureReports | undefined)[]): ReportsTable {
  return new Map(reports.filter((r) => r !== undefined).map((r) => [r.key.name, r]));
}

/** Tells each feature whose own fields are among `fields` (the request's: call only for a request that carries some). */
export function observeFields(table: ReportsTable, request: FinishedRequest, fields: RequestFields): void {
  for (const [name, reports] of table) {
    const own = fields[name];
    if (own !== undefined) reports.finished?.(own, request);
  }
}

/**
 * `line` with each feature's fields of the request placed where the feature says (a field placed
 * by an anchor the line lacks goes at the end); `line` itself when no feature adds any.
 */
export function withFeatureLines<L extends object>(line: L, fields: RequestFields, table: ReportsTable): L {
  const placed: { readonly place: LinePlace; readonly out: Readonly<Record<string, unknown>> }[] = [];
  for (const [name, reports] of table) {
    const own = fields[name];
    if (own !== undefined && reports.line !== undefined)
      placed.push({ place: reports.line.place, out: reports.line.fields(own) });
  }
  if (placed.length === 0) return line;
  const out: Record<string, unknown> = {};
  const anchored = new Set<(typeof placed)[number]>();
  const lay = (edge: 'after' | 'before', key: string): void => {
    for (const p of placed) {
      if (!(edge in p.place) || (p.place as Record<string, string>)[edge] !== key) continue;
      Object.assign(out, p.out);
      anchored.add(p);
    }
  };
  for (const [key, value] of Object.entries(line)) {
    lay('before', key);
    out[key] = value;
    lay('after', key);
  }
  for (const p of placed) if (!anchored.has(p)) Object.assign(out, p.out);
  return out as L;
}
