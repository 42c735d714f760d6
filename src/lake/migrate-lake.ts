/**
 * Brings a lake of an earlier layout to this one, and the lake up to the warehouse.
 *
 * Layout 1 (pool-export up to 67fd1e4) had day partitions, a file per run for snapshots, the liquidity list and
 * mutable history, the history inside the state's table path (`<table>/history/`), and the `_text` twins as columns.
 * Every dataset's rows are in the warehouse except the history of mutable entities, which only the lake keeps: the new
 * lake is written from the warehouse and from the old history files, into `lake.new/` beside the old one, and then
 * takes its place by two renames (`lake` → `lake.old`, `lake.new` → `lake`); a process that dies between them is put
 * right by the next write (`recoverSwap`).
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DATASETS } from '../catalog/catalog.ts';
import { dataFolder } from '../config/data-folder.ts';
import { presentTables } from '../store/migrations.ts';
import type { Warehouse } from '../store/warehouse.ts';
import { movePath } from '../util/atomic-file.ts';
import { lit, qt } from '../util/sql.ts';
import { recoverPublish } from './lake-files.ts';
import {
  chainOfFolder,
  FILE_ROWS,
  LAYOUT_FILE,
  LAYOUT_VERSION,
  lakeLayout,
  lakeSelect,
  monthExpr,
  writeLayoutFile,
} from './layout.ts';
import { type MonthPlan, type Target, writeMonths, writeRuns, writeSeq, writeState } from './month-writes.ts';

/** Finishes a swap of lake folders that a dead process left halfway. */
function recoverSwap(dataDir: string): void {
  const { lake, lakeNew: fresh, lakeOld } = dataFolder(dataDir);
  if (!existsSync(lake) && existsSync(join(fresh, LAYOUT_FILE))) movePath(fresh, lake);
  rmSync(fresh, { recursive: true, force: true });
  rmSync(lakeOld, { recursive: true, force: true });
}

/** Rewrites a lake of layout 1 into this layout (see the header). Returns the files written. */
export async function migrateLake(w: Warehouse, dataDir: string): Promise<number> {
  const { lake, lakeNew: root, lakeOld } = dataFolder(dataDir);
  rmSync(root, { recursive: true, force: true });
  recoverPublish(lake);
  const tables = await presentTables(w);
  let files = 0;
  for (const ds of DATASETS) {
    const target = (chainId: number, part: Target['part']): Target => ({
      ds,
      chainId,
      part,
      root,
      lake,
      fileRows: FILE_ROWS,
    });
    const chains = tables.has(ds.table)
      ? (await w.all(`SELECT DISTINCT chain_id AS c FROM ${qt(ds.table)} ORDER BY 1`)).map((r) => Number(r.c))
      : [];
    for (const chainId of chains) {
      if (ds.kind === 'event' || ds.kind === 'bucket')
        files += await writeSeq(w, target(chainId, 'data'), { from: null });
      else if (ds.kind === 'mutable') files += await writeState(w, target(chainId, 'data'));
      else files += await writeRuns(w, target(chainId, 'data'), { ids: null, all: false });
    }
    if (ds.kind !== 'mutable') continue;
    // The history of mutable entities, from the old files: the only copy of rows that later runs replaced.
    const [schema, table] = ds.table.split('.') as [string, string];
    const history = join(lake, schema, table, 'history');
    for (const chain of existsSync(history) ? readdirSync(history).filter((n) => n.startsWith('chain=')) : []) {
      const glob = join(history, chain, '*', '*.parquet');
      const old = `read_parquet(${lit(glob)}, union_by_name = true, hive_partitioning = false)`;
      const have = new Set((await w.all(`DESCRIBE SELECT * FROM ${old}`)).map((r) => String(r.column_name)));
      const t = target(chainOfFolder(chain), 'history');
      const source = `SELECT ${lakeSelect(ds, (c) => have.has(c))} FROM ${old}`;
      const months = await w.all(`SELECT DISTINCT ${monthExpr(ds, 'history')} AS m FROM (${source}) ORDER BY 1`);
      const plans: MonthPlan[] = months.map((r) => ({ month: String(r.m), from: 1, old: [] }));
      files += await writeMonths(w, t, { source, plans });
    }
  }
  writeLayoutFile(root);
  movePath(lake, lakeOld);
  movePath(root, lake);
  rmSync(lakeOld, { recursive: true, force: true });
  return files;
}

/**
 * Migrates the data folder's lake when it is of an earlier layout (and finishes a migration a process left between
 * its two renames); returns the files written, 0 when the lake is of this layout. `update-lake.ts` calls it first.
 */
export async function migrateEarlierLake(w: Warehouse, dataDir: string): Promise<number> {
  recoverSwap(dataDir);
  const layout = lakeLayout(dataFolder(dataDir).lake);
  return layout !== null && layout < LAYOUT_VERSION ? await migrateLake(w, dataDir) : 0;
}
