/**
 * The report views of `sql/views/` and the helpers they build on (tracked value: the trusted tokens and the backing
 * threshold, `sql/helpers/`), over the lake's dataset views. `query` and `report` use an in-memory database, so they
 * never meet the warehouse's write lock; `<dataDir>/views.duckdb` holds the same views for people's own DuckDB
 * sessions and notebooks.
 */

import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { DATASETS } from '../catalog/catalog.ts';
import { dataFolder } from '../config/data-folder.ts';
import { DEFAULT_TRACKED, type TrackedSettings } from '../config/tracked.ts';
import { defineDatasetViews, viewsWithFiles } from '../lake/lake-db.ts';
import { LAYOUT_VERSION } from '../lake/layout.ts';
import { createTable } from '../store/ddl.ts';
import { duckdb } from '../store/warehouse.ts';
import { replaceFile, writeFileAtomic } from '../util/atomic-file.ts';

const VIEWS_DIR = new URL('../../sql/views/', import.meta.url);
/** Views the reports build on (tracked value), defined before them and not listed as reports. */
const HELPERS_DIR = new URL('../../sql/helpers/', import.meta.url);

/** The SQL files of a folder, in name order. */
function sqlFiles(dir: URL): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((f) => readFileSync(new URL(f, dir), 'utf8'));
}

/** One report view: its name, what it answers and its grain, from the header of its SQL file. */
export interface ReportView {
  readonly name: string;
  readonly answers: string;
  readonly grain: string;
  /** The columns a table shows first, the most important first (the others follow as the width allows). */
  readonly display: readonly string[];
  readonly sql: string;
}

/** The report views of `sql/views/`, in file order. */
export function reportViews(): ReportView[] {
  return readdirSync(VIEWS_DIR)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((f) => {
      const sql = readFileSync(new URL(f, VIEWS_DIR), 'utf8');
      const field = (k: string) => new RegExp(`^-- ${k}: (.+)$`, 'm').exec(sql)?.[1]?.trim() ?? '';
      return {
        name: field('name') || f.replace(/^\d+-|\.sql$/g, ''),
        answers: field('answers'),
        grain: field('grain'),
        display: field('display')
          .split(',')
          .map((c) => c.trim())
          .filter(Boolean),
        sql,
      };
    });
}

/** The trusted tokens and the backing threshold, as a table and a macro of the `reports` schema. */
async function defineTracked(conn: DuckDBConnection, tracked: TrackedSettings): Promise<void> {
  await conn.run('CREATE OR REPLACE TABLE reports.trusted_tokens (chain_id INTEGER, token VARCHAR, symbol VARCHAR)');
  const insert = await conn.prepare('INSERT INTO reports.trusted_tokens VALUES ($1, $2, $3)');
  for (const t of tracked.tokens) {
    insert.bindInteger(1, t.chainId);
    insert.bindVarchar(2, t.token);
    if (t.symbol === null) insert.bindNull(3);
    else insert.bindVarchar(3, t.symbol);
    await insert.run();
  }
  await conn.run(
    `CREATE OR REPLACE MACRO reports.min_tracked_liquidity_usd() AS CAST(${Number(tracked.minLiquidityUsd)} AS DOUBLE)`,
  );
}

/**
 * The tracked-value helpers and the report views, over whatever the dataset names are in `conn` (the lake's views, or
 * the tables of a SQL fixture: test/sql/).
 */
export async function defineReportViews(conn: DuckDBConnection, tracked: TrackedSettings): Promise<void> {
  await conn.run('CREATE SCHEMA IF NOT EXISTS reports');
  await defineTracked(conn, tracked);
  for (const sql of sqlFiles(HELPERS_DIR)) await conn.run(sql);
  for (const v of reportViews()) await conn.run(v.sql);
}

/** The dataset views, the tracked-value helpers and the report views; the views that are empty tables for want of files DuckDB can read. */
async function defineViews(conn: DuckDBConnection, dataDir: string, tracked: TrackedSettings): Promise<string[]> {
  const failed = await defineDatasetViews(conn, dataDir);
  await defineReportViews(conn, tracked);
  return failed;
}

let digest: string | undefined;

/** A digest of what this version defines: the report and helper SQL and every dataset's columns. */
function definitionsDigest(): string {
  digest ??= createHash('sha256')
    .update(
      JSON.stringify({
        reports: reportViews().map((v) => v.sql),
        helpers: sqlFiles(HELPERS_DIR),
        datasets: DATASETS.map((d) => createTable(d)),
      }),
    )
    .digest('hex');
  return digest;
}

/**
 * What a views file was built for: the data folder, the lake's layout, the tracked settings, the views that read
 * files and the definitions of this version. A views file whose key differs from the present one is not used
 * (`openLakeDb`), and one whose key is the present one is not built again (`writeViewsFile`).
 */
function viewsKey(dataDir: string, tracked: TrackedSettings): string {
  return JSON.stringify({
    dataDir: resolve(dataDir),
    layout: LAYOUT_VERSION,
    tracked,
    files: viewsWithFiles(dataDir),
    definitions: definitionsDigest(),
  });
}

/**
 * The views file's size and time of last change: another file put in its place, or the same one changed, differs in
 * them (a copy of the folder that keeps times keeps both files alike, and a copy elsewhere has another key).
 */
function viewsStamp(dataDir: string): string | undefined {
  try {
    const st = statSync(dataFolder(dataDir).views);
    return `${st.size}:${st.mtimeMs}`;
  } catch {
    return undefined;
  }
}

/** The key the views file was built for, as kept beside it, while the file is the one it was kept for. */
function keptKey(dataDir: string): string | undefined {
  try {
    const kept = JSON.parse(readFileSync(dataFolder(dataDir).viewsKey, 'utf8')) as { key?: string; stamp?: string };
    const stamp = viewsStamp(dataDir);
    return stamp !== undefined && kept.stamp === stamp ? kept.key : undefined;
  } catch {
    return undefined;
  }
}

/** Keeps the views file's key beside it (derived: a failure to write it only costs the next run an open). */
function keepKey(dataDir: string, key: string): void {
  const stamp = viewsStamp(dataDir);
  if (stamp === undefined) return;
  try {
    writeFileAtomic(dataFolder(dataDir).viewsKey, JSON.stringify({ key, stamp }));
  } catch {
    // The next run finds the views file current by opening it.
  }
}

/** The table of a views file that holds its key. */
const KEY_TABLE = 'main.pool_export_views';

type LakeDb = { conn: DuckDBConnection; close: () => void };

/** The views file of a data folder, opened read-only, if it was built for the lake and settings as they are now. */
async function openViewsFile(dataDir: string, tracked: TrackedSettings): Promise<LakeDb | undefined> {
  const file = dataFolder(dataDir).views;
  if (!existsSync(file)) return undefined;
  const { DuckDBInstance } = await duckdb();
  const instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' }).catch(() => undefined);
  if (!instance) return undefined;
  const conn = await instance.connect();
  const close = () => {
    conn.closeSync();
    instance.closeSync();
  };
  const key = await conn
    .runAndReadAll(`SELECT key FROM ${KEY_TABLE}`)
    .then((r) => r.getRowObjectsJson()[0]?.key)
    .catch(() => undefined);
  if (key === viewsKey(dataDir, tracked)) return { conn, close };
  close();
  return undefined;
}

/**
 * A DuckDB with the lake's views; close it when done. The views file (`views.duckdb`) when it was built for the lake
 * and settings as they are: its views are bound when a query names them, so opening costs no Parquet footer;
 * otherwise an in-memory DuckDB where every view is defined (and bound) now.
 */
export async function openLakeDb(dataDir: string, tracked: TrackedSettings = DEFAULT_TRACKED): Promise<LakeDb> {
  const file = await openViewsFile(dataDir, tracked);
  if (!file) return defineInMemory(dataDir, tracked);
  await file.conn.run(CACHE_FOOTERS);
  return file;
}

/** A Parquet footer is read once per session, however many views over it a report binds (a session setting). */
const CACHE_FOOTERS = 'SET parquet_metadata_cache = true';

/** An in-memory DuckDB where every view is defined now. */
async function defineInMemory(dataDir: string, tracked: TrackedSettings): Promise<LakeDb> {
  const instance = await (await duckdb()).DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  await conn.run(CACHE_FOOTERS);
  await defineViews(conn, dataDir, tracked);
  return {
    conn,
    close: () => {
      conn.closeSync();
      instance.closeSync();
    },
  };
}

/**
 * Renews `<dataDir>/views.duckdb`: built under a temporary name, then renamed over the old one; left as it is when it
 * was built for the lake and settings as they are (its views read the files by their globs, so new files of a table
 * need no new view). Returns whether it was built.
 */
export async function writeViewsFile(dataDir: string, tracked: TrackedSettings = DEFAULT_TRACKED): Promise<boolean> {
  // Opening the views file costs a run more than half a second (DuckDB reads its catalog of views and macros): the
  // key it was built for is kept beside it, and holds while the file is the one written then.
  const key = viewsKey(dataDir, tracked);
  if (keptKey(dataDir) === key) return false;
  const current = await openViewsFile(dataDir, tracked);
  if (current) {
    current.close();
    keepKey(dataDir, key);
    return false;
  }
  rmSync(dataFolder(dataDir).viewsKey, { force: true });
  // The views file of an earlier version, beside the lake folder under the lake's name: its views are built here under
  // the new name (the first write after an upgrade builds them, there being no current file), so the old file goes,
  // with its write-ahead log if it has one.
  const before = dataFolder(dataDir).viewsBefore;
  rmSync(before, { force: true });
  rmSync(`${before}.wal`, { force: true });
  const target = dataFolder(dataDir).views;
  const tmp = `${target}.tmp`;
  rmSync(tmp, { force: true });
  rmSync(`${tmp}.wal`, { force: true });
  try {
    const instance = await (await duckdb()).DuckDBInstance.create(tmp);
    const conn = await instance.connect();
    let failed: string[];
    try {
      failed = await defineViews(conn, dataDir, tracked);
      // A file with a view it could not make is never found current (`openViewsFile`): the next write makes it again.
      await conn.run(`CREATE TABLE ${KEY_TABLE} AS SELECT CAST($1 AS VARCHAR) AS key`, [failed.length ? '' : key]);
      await conn.run('CHECKPOINT');
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
    replaceFile(tmp, target);
    if (failed.length)
      throw new Error(
        `the views file was written, but these views read no file (DuckDB refused them): ${failed.join('; ')}`,
      );
    keepKey(dataDir, key);
    return true;
  } catch (e) {
    // The old views file stays; no half-built one is left behind.
    rmSync(tmp, { force: true });
    rmSync(`${tmp}.wal`, { force: true });
    throw e;
  }
}
