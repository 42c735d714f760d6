/**
 * DuckDB over the Parquet lake: one view per dataset, named like its warehouse table (`dodoex.swaps`…), and one per
 * mutable entity's history (`dodoex.pairs_history`…). The reports build on them (see `reports/views.ts`).
 *
 * Every file of a table has the same schema (layout 2), so a view binds from one file's footer: no `union_by_name`,
 * which reads every footer. The partition folders are typed (`chain` and `month` are text), so DuckDB skips the
 * partitions a filter on them excludes without opening their files, and a query reads only the footers of the files
 * it scans.
 */

import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { DATASETS, type Dataset, WAREHOUSE_SCHEMA } from '../catalog/catalog.ts';
import { dataFolder } from '../config/data-folder.ts';
import { LakeLayoutError } from '../errors.ts';
import { createTable } from '../store/ddl.ts';
import { lit, q, qt } from '../util/sql.ts';
import {
  byMonth,
  hasHistory,
  LAYOUT_VERSION,
  lakeLayout,
  lakeSelect,
  type TablePart,
  tableDir,
  tableGlob,
} from './layout.ts';

/** Whether a table path holds a Parquet file in one of its chain (and month) folders. */
function hasFiles(dir: string, depth: number): boolean {
  if (!existsSync(dir)) return false;
  return readdirSync(dir, { withFileTypes: true }).some((e) =>
    depth === 0 ? e.isFile() && e.name.endsWith('.parquet') : e.isDirectory() && hasFiles(join(dir, e.name), depth - 1),
  );
}

/** The view of one table path, or an empty table of its columns where the lake has no file of it yet (or `empty`). */
async function defineView(
  conn: DuckDBConnection,
  lake: string,
  view: { readonly ds: Dataset; readonly part: TablePart; readonly empty?: boolean },
): Promise<void> {
  const { ds, part } = view;
  const name = part === 'history' ? `${ds.table}_history` : ds.table;
  const months = byMonth(ds, part);
  if (!view.empty && hasFiles(tableDir(lake, ds, part), months ? 2 : 1)) {
    const types = months ? "{'chain': VARCHAR, 'month': VARCHAR}" : "{'chain': VARCHAR}";
    await conn.run(
      `CREATE OR REPLACE VIEW ${qt(name)} AS SELECT * FROM read_parquet(${lit(tableGlob(lake, ds, part))}, hive_partitioning = true, hive_types = ${types})`,
    );
    return;
  }
  // No file yet: an empty table with the view's columns, so that queries still bind.
  const empty = `${WAREHOUSE_SCHEMA[ds.schema]}._empty_${ds.table.split('.')[1]}`;
  const scratch = qt(empty);
  await conn.run(createTable({ ...ds, table: empty }));
  await conn.run(
    `CREATE OR REPLACE TABLE ${qt(name)} AS SELECT ${lakeSelect(ds)}, NULL::VARCHAR AS chain${months ? ', NULL::VARCHAR AS month' : ''} FROM ${scratch}`,
  );
  await conn.run(`DROP TABLE ${scratch}`);
}

/** The views of a lake that read files (the others are empty tables until the lake has a file of theirs). */
export function viewsWithFiles(dataDir: string): string[] {
  const lake = dataFolder(dataDir).lake;
  return [
    ...DATASETS.flatMap((ds) =>
      (hasHistory(ds) ? (['data', 'history'] as const) : (['data'] as const))
        .filter((part) => hasFiles(tableDir(lake, ds, part), byMonth(ds, part) ? 2 : 1))
        .map((part) => (part === 'history' ? `${ds.table}_history` : ds.table)),
    ),
    ...orphanPaths(lake).map((o) => `${o.schema}.${o.table}`),
  ];
}

/** A folder name the lake's own writer could have made: a schema's, a table path's. */
const LAKE_NAME = /^[a-z][a-z0-9_]{0,126}$/;

/**
 * Table paths of the lake that no dataset of the configuration names, with files: those of a subgraph removed (or set
 * aside), whose files stay. Each is read as a view all the same (`defineDatasetViews`), its columns from its files.
 */
export function orphanPaths(lake: string): { schema: string; table: string; months: boolean }[] {
  const known = new Set(
    DATASETS.flatMap((ds) => (['data', 'history'] as const).map((part) => tableDir(lake, ds, part))),
  );
  const dirs = (at: string) =>
    existsSync(at)
      ? readdirSync(at, { withFileTypes: true }).filter((e) => e.isDirectory() && LAKE_NAME.test(e.name))
      : [];
  return dirs(lake).flatMap((schema) =>
    dirs(join(lake, schema.name)).flatMap((table) => {
      const at = join(lake, schema.name, table.name);
      if (known.has(at)) return [];
      const months = hasFiles(at, 2);
      return months || hasFiles(at, 1) ? [{ schema: schema.name, table: table.name, months }] : [];
    }),
  );
}

/**
 * Creates a view per dataset over its Parquet files, named like its warehouse table, and one per mutable entity's
 * history. A lake of another layout is refused with the command that migrates it. A view DuckDB cannot make over its
 * files (a file it cannot read) is an empty table of its columns, and is returned with why: one dataset's files never
 * keep the others' views from being made.
 */
export async function defineDatasetViews(conn: DuckDBConnection, dataDir: string): Promise<string[]> {
  const lake = dataFolder(dataDir).lake;
  const layout = lakeLayout(lake);
  if (layout !== null && layout !== LAYOUT_VERSION)
    throw new LakeLayoutError(lake, { found: layout, needed: LAYOUT_VERSION });
  for (const s of new Set(Object.values(WAREHOUSE_SCHEMA))) await conn.run(`CREATE SCHEMA IF NOT EXISTS ${q(s)}`);
  const failed: string[] = [];
  for (const ds of DATASETS)
    for (const part of hasHistory(ds) ? (['data', 'history'] as const) : (['data'] as const))
      await defineView(conn, lake, { ds, part }).catch(async (e: unknown) => {
        failed.push(
          `${part === 'history' ? `${ds.table}_history` : ds.table} (${(e as Error).message.split('\n')[0]})`,
        );
        await defineView(conn, lake, { ds, part, empty: true });
      });
  // The files of a subgraph the folder no longer exports are read all the same, their columns from their files.
  for (const o of orphanPaths(lake)) {
    const glob = join(lake, o.schema, o.table, ...(o.months ? ['*', '*'] : ['*']), '*.parquet');
    const types = o.months ? "{'chain': VARCHAR, 'month': VARCHAR}" : "{'chain': VARCHAR}";
    await conn.run(`CREATE SCHEMA IF NOT EXISTS ${q(o.schema)}`);
    await conn
      .run(
        `CREATE OR REPLACE VIEW ${q(o.schema)}.${q(o.table)} AS SELECT * FROM read_parquet(${lit(glob)}, hive_partitioning = true, hive_types = ${types})`,
      )
      .catch((e: Error) => failed.push(`${o.schema}.${o.table} (${e.message.split('\n')[0]})`));
  }
  return failed;
}
