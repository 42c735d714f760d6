/**
 * Table names an analyst can guess: a run of capitals stays whole (`NewTTL` → `new_ttls`, as graph-node's `newTTLs`).
 * A folder an earlier version exported (`new_tt_ls`; columns `token0_price` and `chain` where the rule of
 * `src/catalog/names.ts` gives `token_0_price` and `chain_`) is renamed on its next run, its rows, checkpoints and
 * ledger kept (nothing read again), its lake files rewritten under the new path and names, and the old path gone.
 */
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formerTables, tableOf } from '../../src/catalog/names.ts';
import { loadConfig } from '../../src/config/config.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox, lakeBehindWarehouse } from '../support/export-check.ts';

const SCHEMA = `
type NewTTL @entity(immutable: true) { id: ID! ttl: BigInt! timestamp: BigInt! }
type DODOPair @entity { id: ID! name: String! }
type Liquidity @entity { id: ID! amount: BigDecimal! token0Price: BigDecimal chain: String }
`;

let sb: SandboxProcess;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pe-names-'));
  writeFileSync(join(dir, 'ens.graphql'), SCHEMA);
  sb = await startSandbox(['--scale', '3000', '--chains', '1', '--subgraph', `ens=${join(dir, 'ens.graphql')}`]);
});
afterAll(async () => {
  await sb?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('table names', () => {
  it('keep a run of capitals whole, where the earlier rule cut it', () => {
    expect(tableOf('NewTTL')).toBe('new_ttls');
    expect(formerTables('NewTTL')).toEqual(['new_ttls', 'new_tt_ls']);
    expect(tableOf('DODOPair')).toBe('dodo_pairs');
    expect(tableOf('Liquidity')).toBe('liquidities');
    expect(tableOf('MaintainerEarnings')).toBe('maintainer_earnings');
    expect(tableOf('TokenDayData')).toBe('token_day_datas');
  });

  it('rename a folder exported before on its next run, reading nothing again', async () => {
    const data = join(dir, 'a');
    const env = sandboxEnv(sb, data);
    const url = /^subgraph ens: (\S+)$/m.exec(sb.banner)![1]!;
    expect((await cli(['subgraph', 'add', 'ens', '--chain', 'ethereum', '--url', url], env)).code).toBe(0);
    const run = ['run', '--subgraphs', 'ens'];
    expect((await cli(run, env)).code).toBe(0);
    // The folder as the earlier version left it: the old table name, in the warehouse, its ledger and the lake.
    const w = await Warehouse.open(data);
    let rows: number;
    try {
      rows = Number((await w.all('SELECT count(*) AS n FROM ens.new_ttls'))[0]!.n);
      expect(rows).toBeGreaterThan(0);
      await w.exec('ALTER TABLE ens.new_ttls RENAME TO new_tt_ls');
      // Columns as the rule before names.ts named them.
      for (const [from, to] of [
        ['token_0_price', 'token0_price'],
        ['token_0_price_text', 'token0_price_text'],
        ['chain_', 'chain'],
      ])
        await w.exec(`ALTER TABLE ens.liquidities RENAME COLUMN ${from} TO ${to}`);
      for (const t of ['checkpoints', 'run_tasks', 'lake_pending', 'verifications'])
        await w.exec(`UPDATE _pool_export.${t} SET dataset = 'ens.new_tt_ls' WHERE dataset = 'ens.new_ttls'`);
    } finally {
      await w.close();
    }
    renameSync(join(data, 'lake', 'ens', 'new_ttls'), join(data, 'lake', 'ens', 'new_tt_ls'));
    // A folder added before names were kept: its list holds none.
    const list = JSON.parse(readFileSync(join(data, 'subgraphs.json'), 'utf8')) as { subgraphs: { names?: unknown }[] };
    for (const s of list.subgraphs) delete s.names;
    writeFileSync(join(data, 'subgraphs.json'), JSON.stringify(list));
    const next = await cli([...run, '--log-format', 'json'], env);
    expect(next.code, next.stderr.slice(-2000)).toBe(0);
    // Nothing was read again: no new block, so the task found its checkpoint under the new name.
    expect(next.stderr).toMatch(/"event":"task-unchanged","dataset":"ens.new_ttls"/);
    expect(next.stderr).toMatch(/"event":"task-unchanged","dataset":"ens.liquidities"/);
    const after = await Warehouse.open(data, { readOnly: true });
    try {
      const tables = (
        await after.all("SELECT table_name AS t FROM duckdb_tables() WHERE schema_name = 'ens' ORDER BY 1")
      ).map((r) => String(r.t));
      expect(tables).toEqual(['dodo_pairs', 'liquidities', 'new_ttls']);
      expect(Number((await after.all('SELECT count(*) AS n FROM ens.new_ttls'))[0]!.n)).toBe(rows);
      const columns = (
        await after.all(
          "SELECT column_name AS c FROM duckdb_columns() WHERE schema_name = 'ens' AND table_name = 'liquidities' ORDER BY column_index",
        )
      ).map((r) => String(r.c));
      expect(columns.slice(0, 6)).toEqual([
        'id',
        'amount',
        'amount_text',
        'token_0_price',
        'token_0_price_text',
        'chain_',
      ]);
    } finally {
      await after.close();
    }
    expect(existsSync(join(data, 'lake', 'ens', 'new_tt_ls'))).toBe(false);
    expect(existsSync(join(data, 'lake', 'ens', 'new_ttls'))).toBe(true);
    expect(await lakeBehindWarehouse(data)).toEqual([]);
    loadConfig({ env });
    expect(
      (await compareWithSandbox(sb, data, [1], ['ens.new_ttls', 'ens.dodo_pairs', 'ens.liquidities'])).mismatches,
    ).toEqual([]);
  });
});
