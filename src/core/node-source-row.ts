// One node source as /admin/hosts shows it: the fleet's report (src/fleet/node-fleet.ts) and the
// admin view (src/admin/hosts-view.ts) share this one plain row.

export interface NodeSourceRow {
  readonly name: string;
  readonly kind: string;
  readonly ok: boolean;
  readonly nodes: number;
  readonly last_error: string | null;
  readonly failing_since: string | null;
  readonly last_look_at: string | null;
  readonly changes: number;
  /** The source's nodes left out of the fleet (a name another source took), with why. */
  readonly left_out: readonly { readonly node: string; readonly reason: string }[];
}
