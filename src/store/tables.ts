/**
 * The tables of a run's datasets, readied before its first page: their schemas and tables made, tables and columns an
 * earlier version named otherwise renamed, columns the catalog now reads added, and columns an earlier version typed
 * otherwise cast (`table-changes.ts`). Each dataset's table is readied apart where the whole cannot be, so that one that
 * fails (a statement DuckDB refuses) fails that dataset alone.
 */
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Dataset, WAREHOUSE_SCHEMA } from '../catalog/catalog.ts';
import { dataFolder } from '../config/data-folder.ts';
import { q, qt } from '../util/sql.ts';
import { createTable, tableColumns } from './ddl.ts';
import type { TableStore } from './sql-port.ts';
import { renameFormer, retypeColumns } from './table-changes.ts';

/** What readying needs of a warehouse. */

/**
 * Readies the tables of `datasets`: all of them in one transaction where it can, each on its own where not. Returns the
 * datasets whose table could not be readied, each with why (none: every one is ready).
 */
export async function prepareTables(w: TableStore, datasets: readonly Dataset[]): Promise<Map<Dataset, Error>> {
  const failed = new Map<Dataset, Error>();
  try {
    await prepare(w, datasets);
  } catch {
    // One of them cannot be readied: each on its own, so that the others are.
    for (const d of datasets)
      await prepare(w, [d]).catch((e: unknown) => failed.set(d, e instanceof Error ? e : new Error(String(e))));
  }
  await w.exec('CHECKPOINT');
  return failed;
}

async function prepare(w: TableStore, datasets: readonly Dataset[]): Promise<void> {
  // Tables and columns an earlier version named otherwise are renamed first, their rows kept.
  await renameFormer(w, datasets);
  // An immutable entity read by id kept a history table path before: its rows never change, so it keeps none now.
  const lake = dataFolder(dirname(w.path)).lake;
  for (const d of datasets.filter((x) => x.kind === 'mutable' && x.immutable))
    rmSync(join(lake, WAREHOUSE_SCHEMA[d.schema]!, `${d.table.split('.')[1]!}_history`), {
      recursive: true,
      force: true,
    });
  const have = await w.transaction(async (tx) => {
    for (const s of new Set(datasets.map((d) => WAREHOUSE_SCHEMA[d.schema]!)))
      await tx.exec(`CREATE SCHEMA IF NOT EXISTS ${q(s)}`);
    for (const d of datasets) await tx.exec(createTable(d));
    const have = new Map(
      (
        await tx.all(
          "SELECT schema_name || '.' || table_name || '.' || column_name AS c, data_type AS t FROM duckdb_columns() WHERE NOT internal",
        )
      ).map((r) => [String(r.c), String(r.t)]),
    );
    for (const d of datasets)
      for (const [name, type] of tableColumns(d))
        if (!have.has(`${d.table}.${name}`)) await tx.exec(`ALTER TABLE ${qt(d.table)} ADD COLUMN ${q(name)} ${type}`);
    return have;
  });
  for (const d of datasets) await retypeColumns(w, d, have);
}
