// Issue 43 item 7: the checks across entries run beside the schema, over what parsed, and judge
// only as far as what parsed lets them (a check whose answer hangs on a broken field says nothing).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '#src/config-tables.ts';

const problemsOf = (toml: string): string[] => {
  const result = loadConfig(toml, {}, undefined, () => ({ ok: false, message: 'no files here' }));
  return result.ok ? [] : result.problems.map((p) => `${p.path}: ${p.message}`);
};

const NODES = '[[nodes]]\nname = "a"\nurl = "http://10.0.0.1:8000"\n';

test('cross checks over what parsed (table): reported beside schema problems, silent where they cannot judge', () => {
  const table: { name: string; toml: string; has: RegExp[]; hasNot: RegExp[] }[] = [
    {
      name: 'a duplicate node name beside a bad kind in the same entries',
      toml: `${NODES}kind = "vlm"\n[[nodes]]\nname = "a"\nurl = 5\n`,
      has: [/^nodes\[0\]\.kind: /, /^nodes\[1\]\.url: /, /^nodes\[1\]\.name: duplicate node name "a"/],
      hasNot: [],
    },
    {
      name: 'an unserved group is not judged while a node group did not parse',
      toml: `${NODES}group = 7\n[[models.available]]\nname = "m"\ngroup = "big"\n`,
      has: [/^nodes\[0\]\.group: /],
      hasNot: [/no node has group/],
    },
    {
      name: 'the default is not judged while a model name did not parse',
      toml: `${NODES}[models]\ndefault = "x"\n[[models.available]]\nname = ""\n`,
      has: [/^models\.available\[0\]\.name: /],
      hasNot: [/models\.default/],
    },
    {
      name: 'a site tenant is not judged while a tenant name did not parse; a tenant site not while a pin id did not',
      toml: `${NODES}[[tenants]]\nname = "bad name"\nkeys = ["k"]\nsites = ["c"]\n[mesh]\nsite = "a"\nurl = "http://10.0.0.9:8080"\nkey_file = "k"\nlisten = ["/ip4/0.0.0.0/tcp/4001"]\n[[mesh.sites]]\nid = "bad id"\npublic_key = "${Buffer.alloc(32, 1).toString('base64url')}"\ntenant = "nobody"\n`,
      has: [/^tenants\[0\]\.name: /, /^mesh\.sites\[0\]\.id: /],
      hasNot: [/is not the name of any \[\[tenants\]\]/, /is not pinned/],
    },
    {
      name: 'admin and server on one address, beside an unknown key',
      toml: `${NODES}[server]\nlisten = "127.0.0.1:8080"\ntypo = 1\n[admin]\nlisten = "127.0.0.1:8080"\n`,
      has: [/^server\.typo: unknown key/, /^admin\.listen: must differ from server\.listen/],
      hasNot: [],
    },
    {
      name: 'a valid file: no problem from either pass',
      toml: NODES,
      has: [],
      hasNot: [/./],
    },
  ];
  for (const row of table) {
    const problems = problemsOf(row.toml);
    for (const want of row.has)
      assert.ok(
        problems.some((p) => want.test(p)),
        `${row.name}: ${want} in ${problems.join(' | ')}`,
      );
    for (const unwanted of row.hasNot)
      assert.ok(!problems.some((p) => unwanted.test(p)), `${row.name}: not ${unwanted} in ${problems.join(' | ')}`);
    assert.equal(new Set(problems).size, problems.length, `${row.name}: none twice`);
  }
});
