/**
 * DuckDB over the Parquet lake: views named like the warehouse tables (`dodoex.swaps`…) and the report views of
 * `sql/views/`. `query` and `report` use an in-memory database, so they never meet the warehouse's write lock;
 * `<dataDir>/lake.duckdb` holds the same views for people's own DuckDB sessions and notebooks.
 */
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DATASETS, WAREHOUSE_SCHEMA } from '../catalog/catalog.ts';
import { createTable, lit, q, qt } from '../store/ddl.ts';
import { datasetDir, LAKE_DIR, viewGlob } from './layout.ts';

/** The views file inside the data folder. */
export const VIEWS_FILE = 'lake.duckdb';

const VIEWS_DIR = new URL('../../sql/views/', import.meta.url);

/** One report view: its name, what it answers and its grain, from the header of its SQL file. */
export interface ReportView {
  readonly name: string;
  readonly answers: string;
  readonly grain: string;
  readonly sql: string;
}

/** The report views of `sql/views/`, in file order. */
export function reportViews(): ReportView[] {
  return readdirSync(VIEWS_DIR).filter((f) => f.endsWith('.sql')).sort().map((f) => {
    const sql = readFileSync(new URL(f, VIEWS_DIR), 'utf8');
    const field = (k: string) => new RegExp(`^-- ${k}: (.+)$`, 'm').exec(sql)?.[1]?.trim() ?? '';
    return { name: field('name') || f.replace(/^\d+-|\.sql$/g, ''), answers: field('answers'), grain: field('grain'), sql };
  });
}

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

/** Creates the dataset views (or empty tables where the lake has no file yet) and the report views. */
async function defineViews(conn: DuckDBConnection, dataDir: string): Promise<void> {
  const lake = join(dataDir, LAKE_DIR);
  for (const s of new Set(Object.values(WAREHOUSE_SCHEMA))) await conn.run(`CREATE SCHEMA IF NOT EXISTS ${q(s)}`);
  await conn.run('CREATE SCHEMA IF NOT EXISTS reports');
  for (const ds of DATASETS) {
    const glob = viewGlob(lake, ds);
    const root = ds.kind === 'mutable' ? join(datasetDir(lake, ds), 'current') : datasetDir(lake, ds);
    if (hasParquet(root)) {
      // Partition columns: `chain` (the chain's name) stays; `day` duplicates the row's own time columns.
      const exclude = ds.kind === 'mutable' ? '' : ' EXCLUDE (day)';
      await conn.run(`CREATE OR REPLACE VIEW ${qt(ds.table)} AS SELECT *${exclude} FROM read_parquet(${lit(glob)}, hive_partitioning = true, union_by_name = true)`);
    } else {
      await conn.run(createTable(ds));
    }
  }
  for (const v of reportViews()) await conn.run(v.sql);
}

/** An in-memory DuckDB with the lake's views; close it when done. */
export async function openLakeDb(dataDir: string): Promise<{ conn: DuckDBConnection; close: () => void }> {
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  await defineViews(conn, dataDir);
  return {
    conn,
    close: () => {
      conn.closeSync();
      instance.closeSync();
    },
  };
}

/** Renews `<dataDir>/lake.duckdb`: built under a temporary name, then renamed over the old one. */
export async function writeViewsFile(dataDir: string): Promise<void> {
  const target = join(dataDir, VIEWS_FILE);
  const tmp = `${target}.tmp`;
  rmSync(tmp, { force: true });
  rmSync(`${tmp}.wal`, { force: true });
  try {
    const instance = await DuckDBInstance.create(tmp);
    const conn = await instance.connect();
    try {
      await defineViews(conn, dataDir);
      await conn.run('CHECKPOINT');
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
    renameSync(tmp, target);
  } catch (e) {
    // The old views file stays; no half-built one is left behind.
    rmSync(tmp, { force: true });
    rmSync(`${tmp}.wal`, { force: true });
    throw e;
  }
}
