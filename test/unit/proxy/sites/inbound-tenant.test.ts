// Which tenant a forwarded request is admitted as: the sending site's [[mesh.sites]] tenant decides
// (limits, scopes, weight); the tenant it states only lowers the class.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TenantPriority } from '#src/core/tenant-class.ts';
import type { TenantSpec } from '#src/tenants/tenants-config.ts';
import { cappedClass, inboundTenant } from '#src/proxy/sites/inbound-tenant.ts';
import { tenantSpec } from '#test/fixtures/builders.ts';

function tenant(name: string, priority: TenantPriority, weight = 1, over: Partial<TenantSpec> = {}): TenantSpec {
  return tenantSpec(name, { priority, weight, ...over });
}

const TENANTS = [
  tenant('peer-std', 'standard', 3, { maxConcurrent: 2 }),
  tenant('peer-int', 'interactive', 2),
  tenant('peer-batch', 'batch'),
];

test('the class is the lower of the two; none stated keeps the own one', () => {
  const cases: [TenantPriority, TenantPriority | undefined, TenantPriority][] = [
    ['interactive', undefined, 'interactive'],
    ['interactive', 'interactive', 'interactive'],
    ['interactive', 'standard', 'standard'],
    ['interactive', 'batch', 'batch'],
    ['standard', 'interactive', 'standard'],
    ['standard', 'batch', 'batch'],
    ['batch', 'interactive', 'batch'],
    ['batch', undefined, 'batch'],
  ];
  for (const [own, stated, expected] of cases) assert.equal(cappedClass(own, stated), expected, `${own} / ${String(stated)}`);
});

test("a forward is admitted as its site's tenant, never the one it states; the class is capped", () => {
  const cases: {
    name: string;
    siteTenant: string | undefined;
    claim: { name: string; priority: TenantPriority } | undefined;
    tenant: string | undefined;
    queue: { name: string; priority: TenantPriority; weight: number };
  }[] = [
    {
      name: 'standard site, claims interactive: capped to standard',
      siteTenant: 'peer-std',
      claim: { name: 'team-a', priority: 'interactive' },
      tenant: 'peer-std',
      queue: { name: 'peer-std', priority: 'standard', weight: 3 },
    },
    {
      name: 'standard site, claims batch: batch',
      siteTenant: 'peer-std',
      claim: { name: 'nightly', priority: 'batch' },
      tenant: 'peer-std',
      queue: { name: 'peer-std', priority: 'batch', weight: 3 },
    },
    {
      name: 'interactive site, claims standard: standard',
      siteTenant: 'peer-int',
      claim: { name: 'team-a', priority: 'standard' },
      tenant: 'peer-int',
      queue: { name: 'peer-int', priority: 'standard', weight: 2 },
    },
    {
      name: 'interactive site, states none: interactive',
      siteTenant: 'peer-int',
      claim: undefined,
      tenant: 'peer-int',
      queue: { name: 'peer-int', priority: 'interactive', weight: 2 },
    },
    {
      name: 'batch site, claims interactive: batch',
      siteTenant: 'peer-batch',
      claim: { name: 'x', priority: 'interactive' },
      tenant: 'peer-batch',
      queue: { name: 'peer-batch', priority: 'batch', weight: 1 },
    },
    {
      name: "claiming the receiver's own tenant name grants nothing",
      siteTenant: 'peer-batch',
      claim: { name: 'peer-int', priority: 'interactive' },
      tenant: 'peer-batch',
      queue: { name: 'peer-batch', priority: 'batch', weight: 1 },
    },
    {
      name: 'site without a tenant: no tenant limits, queued as the open default',
      siteTenant: undefined,
      claim: { name: 'team-a', priority: 'interactive' },
      tenant: undefined,
      queue: { name: 'default', priority: 'standard', weight: 1 },
    },
    {
      name: 'site without a tenant, claims batch: batch',
      siteTenant: undefined,
      claim: { name: 'team-a', priority: 'batch' },
      tenant: undefined,
      queue: { name: 'default', priority: 'batch', weight: 1 },
    },
    {
      name: 'site without a tenant, states none',
      siteTenant: undefined,
      claim: undefined,
      tenant: undefined,
      queue: { name: 'default', priority: 'standard', weight: 1 },
    },
  ];
  for (const c of cases) {
    const decided = inboundTenant({ id: 'b', tenant: c.siteTenant }, c.claim, TENANTS);
    assert.equal(decided.tenant?.name, c.tenant, c.name);
    assert.deepEqual(decided.queue, c.queue, c.name);
  }
  // The tenant's own spec comes back whole: its limits and scopes are what admission applies.
  assert.equal(inboundTenant({ id: 'b', tenant: 'peer-std' }, undefined, TENANTS).tenant, TENANTS[0]);
});

test('a pin naming a tenant the config lacks fails closed (the config validation refuses it)', () => {
  assert.throws(
    () => inboundTenant({ id: 'b', tenant: 'gone' }, undefined, TENANTS),
    /\[\[mesh.sites\]\] "b" names tenant "gone", which is not configured/,
  );
});
