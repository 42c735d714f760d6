/**
 * A subgraph whose schema changes upstream, as a user meets it: the command line as a child process against a sandbox
 * that serves the test schema as `pools`, and as `pools2` with a field of `Pool` gone and another new. The subgraph's
 * URL is moved to `pools2` (a redeployment): the run fails `Pool`'s task with a line that names the field and the fix,
 * the others go on; `subgraph refresh` takes the new schema; the next run reads `Pool` again whole into its new column,
 * exactly (against `pools2`'s own rows), in the warehouse and the lake. A field whose column would change type is
 * refused in one line, and nothing changes. And a new version at the same URL (the sandbox's `redeploy`: a new
 * `_meta.deployment`, a new manifest on its IPFS route) is taken by `subgraph refresh` with no file.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { openLakeDb } from '../../src/reports/views.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox, lakeBehindWarehouse } from '../support/export-check.ts';

const FIXTURE = fileURLToPath(new URL('../fixtures/subgraphs/every-type.graphql', import.meta.url));

let sb: SandboxProcess;
let dir: string;
let url: (name: string) => string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pe-subgraph-refresh-'));
  const text = readFileSync(FIXTURE, 'utf8');
  expect(text).toContain('  sqrtPrice: BigInt!\n');
  const moved = join(dir, 'moved.graphql');
  writeFileSync(moved, text.replace('  sqrtPrice: BigInt!\n', '  feeGrowth: BigInt!\n'));
  sb = await startSandbox([
    '--scale',
    '2000',
    '--chains',
    '1',
    '--subgraph',
    `pools=${FIXTURE}`,
    '--subgraph',
    `pools2=${moved}`,
  ]);
  url = (name) => new RegExp(`^subgraph ${name}: (\\S+)$`, 'm').exec(sb.banner)![1]!;
});
afterAll(async () => {
  await sb?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('a subgraph whose schema changes upstream', () => {
  it('fails the changed entity alone, naming the field and the fix; refresh takes the new schema; the next run fills the new column exactly', async () => {
    const data = join(dir, 'a');
    const env = sandboxEnv(sb, data);
    expect((await cli(['subgraph', 'add', 'pools', '--chain', 'ethereum', '--url', url('pools')], env)).code).toBe(0);
    const run = ['run', '--subgraphs', 'pools', '--log-format', 'json'];
    expect((await cli(run, env)).code).toBe(0);
    // The upstream is redeployed with the new schema at the subgraph's URL; the folder knows no deployment hash (as
    // one added before hashes were kept, or a config file's subgraph), so the run meets the change field by field.
    const file = join(data, 'subgraphs.json');
    const list = JSON.parse(readFileSync(file, 'utf8').replaceAll(url('pools'), url('pools2')));
    for (const d of list.subgraphs[0].deployments) delete d.deployment;
    writeFileSync(file, JSON.stringify(list));
    await sb.control('advance', { blocks: 10 });
    const failed = await cli(run, env);
    expect(failed.code).not.toBe(0);
    const errors = failed.stderr.split('\n').filter((l) => l.includes('"event":"task-failed"'));
    expect(errors.map((l) => (JSON.parse(l) as { dataset: string }).dataset)).toEqual(['pools.pools']);
    expect(errors[0]).toMatch(/Type `Pool` has no field `sqrtPrice`.*pool-export subgraph refresh NAME/);
    // The other entities went on.
    expect(failed.stderr).toMatch(/"event":"task-done","dataset":"pools.swaps"/);

    const refreshed = await cli(['subgraph', 'refresh', 'pools'], env);
    expect(refreshed.stderr).toBe('');
    expect(refreshed.code).toBe(0);
    expect(refreshed.stdout).toContain('Pool.sqrtPrice (BigInt!) is gone');
    expect(refreshed.stdout).toContain('Pool.feeGrowth (BigInt!) is new');
    expect(refreshed.stdout).toContain('emptied, to be read again whole by the next run: pools.pools\n');
    expect((await cli(['subgraph', 'refresh', 'pools'], env)).stdout).toBe('subgraph pools: its schema is unchanged\n');

    const next = await cli(run, env);
    expect(next.code, next.stderr.slice(-2000)).toBe(0);
    loadConfig({ env });
    const cmp = await compareWithSandbox(sb, data, [1], ['pools.pools'], 'pools2');
    expect(cmp.mismatches).toEqual([]);
    expect(cmp.rows).toBeGreaterThan(5);
    expect(await lakeBehindWarehouse(data)).toEqual([]);
    // The new column holds every row's value in the warehouse and in the lake; the old one stays in the warehouse, empty.
    const w = await Warehouse.open(data, { readOnly: true });
    try {
      const [r] = await w.all(
        'SELECT count(*) AS n, count(fee_growth_text) AS f, count(sqrt_price_text) AS s FROM pools.pools',
      );
      expect(Number(r!.f)).toBe(Number(r!.n));
      expect(Number(r!.s)).toBe(0);
    } finally {
      await w.close();
    }
    const lake = await openLakeDb(data);
    try {
      const rows = (
        await lake.conn.runAndReadAll('SELECT count(*) AS n, count(_exact.fee_growth) AS f FROM pools.pools')
      ).getRowObjectsJson();
      expect(Number(rows[0]!.f)).toBe(Number(rows[0]!.n));
    } finally {
      lake.close();
    }
  });

  it("takes a new version at the same URL from the deployment's own files: a new hash, no schema file", async () => {
    const data = join(dir, 'c');
    const env = sandboxEnv(sb, data);
    const added = await cli(['subgraph', 'add', 'pools', '--chain', 'ethereum', '--url', url('pools')], env);
    // From the sandbox's IPFS route: no line about introspection.
    expect(added.stderr).toBe('');
    const run = ['run', '--subgraphs', 'pools'];
    expect((await cli(run, env)).code).toBe(0);
    // graph-node moves the name to a new deployment: same URL, a new `_meta.deployment`, a new manifest on IPFS.
    await sb.control('redeploy', { name: 'pools', to: 'pools2' });
    try {
      await sb.control('advance', { blocks: 10 });
      // The run sees the new hash and reads nothing from it: a new version may have changed any row.
      const refused = await cli([...run, '--log-format', 'json'], env);
      expect(refused.code).not.toBe(0);
      const failed = refused.stderr.split('\n').filter((l) => l.includes('"event":"task-failed"'));
      expect(failed).toHaveLength(9);
      expect(failed[0]).toMatch(
        /the subgraph pools on ethereum serves a new deployment, Qm\w+ \(added at Qm\w+\): .*pool-export subgraph refresh pools/,
      );
      const refreshed = await cli(['subgraph', 'refresh', 'pools'], env);
      expect(refreshed.stderr).toBe('');
      expect(refreshed.code).toBe(0);
      expect(refreshed.stdout).toContain('Pool.sqrtPrice (BigInt!) is gone');
      expect(refreshed.stdout).toContain('Pool.feeGrowth (BigInt!) is new');
      expect(refreshed.stdout).toMatch(
        /^a new deployment on ethereum \(Qm\w+, was Qm\w+\): as a new version may have changed any row, every dataset there is read again whole by the next run$/m,
      );
      const next = await cli(run, env);
      expect(next.code, next.stderr.slice(-2000)).toBe(0);
      loadConfig({ env });
      const cmp = await compareWithSandbox(sb, data, [1], undefined, 'pools2');
      expect(cmp.mismatches.filter((m) => m.dataset.startsWith('pools.'))).toEqual([]);
      expect(cmp.checked).toBeGreaterThanOrEqual(9);
      expect(await lakeBehindWarehouse(data)).toEqual([]);
    } finally {
      await sb.control('redeploy', { name: 'pools', to: 'pools' });
    }
  });

  it('refuses, in one line and changing nothing, a field whose column would change type', async () => {
    const data = join(dir, 'b');
    const env = sandboxEnv(sb, data);
    expect((await cli(['subgraph', 'add', 'pools', '--chain', 'ethereum', '--url', url('pools')], env)).code).toBe(0);
    const before = readFileSync(join(data, 'subgraphs.json'), 'utf8');
    const retyped = join(dir, 'retyped.graphql');
    writeFileSync(retyped, readFileSync(FIXTURE, 'utf8').replace('  decimals: Int!\n', '  decimals: BigDecimal!\n'));
    const r = await cli(['subgraph', 'refresh', 'pools', '--schema', retyped], env);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/pools\.tokens\.decimals would change type \(INTEGER → DOUBLE\).*subgraph remove pools/);
    expect(readFileSync(join(data, 'subgraphs.json'), 'utf8')).toBe(before);
  });

  it("names a new version's fields around the names kept: a new field never takes a column over", async () => {
    const data = join(dir, 'd');
    const env = sandboxEnv(sb, data);
    expect((await cli(['subgraph', 'add', 'pools', '--chain', 'ethereum', '--url', url('pools')], env)).code).toBe(0);
    // The new version has a field `factoryId`, whose column by the rule alone would be `factory_id`: the reference
    // `factory` has held that column since the subgraph was added.
    const next = join(dir, 'factory-id.graphql');
    writeFileSync(
      next,
      readFileSync(FIXTURE, 'utf8').replace('  factory: Factory!\n', '  factory: Factory!\n  factoryId: String\n'),
    );
    const r = await cli(['subgraph', 'refresh', 'pools', '--schema', next], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      "Pool.factoryId's column: factory_id_, not factory_id (factory_id is Pool.factory's column)",
    );
    const spec = JSON.parse(readFileSync(join(data, 'subgraphs.json'), 'utf8')).subgraphs[0];
    expect(spec.names.Pool.columns).toMatchObject({ factory: 'factory_id', factoryId: 'factory_id_' });
    const w = await Warehouse.open(data, { readOnly: true });
    try {
      const cols = (
        await w.all(
          "SELECT column_name AS c FROM duckdb_columns() WHERE schema_name = 'pools' AND table_name = 'pools'",
        )
      ).map((x) => String(x.c));
      expect(cols).toEqual(expect.arrayContaining(['factory_id', 'factory_id_']));
    } finally {
      await w.close();
    }
  });
});
