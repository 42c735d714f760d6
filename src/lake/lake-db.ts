/**
 * DuckDB over the Parquet lake: one view per dataset, named like its warehouse table (`dodoex.swaps`…). The reports
 * build on them (see `reports/views.ts`).
 */

import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { DATASETS, WAREHOUSE_SCHEMA } from '../catalog/catalog.ts';
import { createTable } from '../store/ddl.ts';
import { lit, q, qt } from '../util/sql.ts';
import { datasetDir, LAKE_DIR, viewGlob } from './layout.ts';

/** Whether a folder holds a Parquet file at any depth (skipping the `history` folder of mutable datasets). */
function hasParquet(dir: string): boolean {
  if (!existsSync(dir)) return false;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name.endsWith('.parquet')) return true;
    if (name !== 'history' && statSync(p).isDirectory() && hasParquet(p)) return true;
  }
  return false;
}

/**
 * Creates a view per dataset over its Parquet files, named like its warehouse table (or an empty table where the lake
 * has no file yet, so that queries still bind).
 */
export async function defineDatasetViews(conn: DuckDBConnection, dataDir: string): Promise<void> {
  const lake = join(dataDir, LAKE_DIR);
  for (const s of new Set(Object.values(WAREHOUSE_SCHEMA))) await conn.run(`CREATE SCHEMA IF NOT EXISTS ${q(s)}`);
  for (const ds of DATASETS) {
    const glob = viewGlob(lake, ds);
    const root = ds.kind === 'mutable' ? join(datasetDir(lake, ds), 'current') : datasetDir(lake, ds);
    if (hasParquet(root)) {
      // Partition columns: `chain` (the chain's name) stays; `day` duplicates the row's own time columns.
      const exclude = ds.kind === 'mutable' ? '' : ' EXCLUDE (day)';
      await conn.run(
        `CREATE OR REPLACE VIEW ${qt(ds.table)} AS SELECT *${exclude} FROM read_parquet(${lit(glob)}, hive_partitioning = true, union_by_name = true)`,
      );
    } else {
      // No file yet: an empty table with the view's columns (the `chain` partition included), so that queries still bind.
      await conn.run(createTable(ds));
      await conn.run(`ALTER TABLE ${qt(ds.table)} ADD COLUMN chain VARCHAR`);
    }
  }
}
