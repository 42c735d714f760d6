/**
 * What a warehouse an earlier version wrote becomes, table by table, with nothing read again: tables and columns it
 * named otherwise are renamed (`Dataset.formerly`, `Column.formerly`), and columns it typed otherwise are cast in place.
 * Each change has the dataset's lake files rebuilt.
 */
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Column, type Dataset, WAREHOUSE_SCHEMA } from '../catalog/catalog.ts';
import { MICROS, textColumn } from '../catalog/column.ts';
import { dataFolder } from '../config/data-folder.ts';
import { q, qt } from '../util/sql.ts';
import { hasText, sqlType, textType } from './ddl.ts';
import { markLakeRebuild } from './lake-rebuild.ts';
import type { TableStore } from './sql-port.ts';

/** Bytes of one part of a path, on every file system the lake may be on. */
const MAX_PATH_PART = 255;

/** What the changes need of a warehouse: its statements, its transactions and its file's path. */

/**
 * Renames what an earlier version named otherwise among `datasets`: each table found under an earlier name
 * (`renameTable`), then each column (`renameColumns`).
 */
export async function renameFormer(w: TableStore, datasets: readonly Dataset[]): Promise<void> {
  const renamed = datasets.filter((d) => d.formerly || d.columns.some((c) => c.formerly));
  if (!renamed.length) return;
  const tables = new Set(
    (await w.all("SELECT schema_name || '.' || table_name AS t FROM duckdb_tables() WHERE NOT internal")).map((r) =>
      String(r.t),
    ),
  );
  for (const d of renamed.filter((x) => x.formerly)) await renameTable(w, d, tables);
  const moved = renamed.filter((d) => d.columns.some((c) => c.formerly) && (tables.has(d.table) || d.formerly));
  if (moved.length) await renameColumns(w, moved);
}

/**
 * A dataset an earlier version named otherwise (`Dataset.formerly`): its table is renamed, its rows in the exporter's
 * own tables (checkpoints, shards, the run ledger, verifications, digests, pending lake writes) take the new name, in
 * one transaction; then its lake files are rebuilt under the new table path, and the old paths' folders removed (a
 * bucket lake's publish then deletes their objects). Nothing is read again. A process stopped after the commit leaves
 * the old folders, removed by the next start (the rename is found done, the folders still there).
 */
async function renameTable(w: TableStore, d: Dataset, tables: ReadonlySet<string>): Promise<void> {
  const former = d.formerly!.find((t) => tables.has(t));
  if (former && !tables.has(d.table)) {
    await w.transaction(async (tx) => {
      await tx.exec(`ALTER TABLE ${qt(former)} RENAME TO ${q(d.table.split('.')[1]!)}`);
      for (const t of RENAMED_LEDGER)
        await tx.exec(`UPDATE _pool_export.${t} SET dataset = $1 WHERE dataset = $2`, [d.name, former]);
      await markLakeRebuild(tx, d);
    });
    await w.exec('CHECKPOINT');
  }
  // The old table paths, `<lake>/<schema>/<table>` and its history (the layout of `lake/layout.ts`, `tableDir`).
  const lake = dataFolder(dirname(w.path)).lake;
  // A name too long for a path (the rule before this one did not cut names) never had a folder.
  for (const old of d.formerly!.map((t) => t.split('.')[1]!))
    for (const name of [old, `${old}_history`].filter((n) => Buffer.byteLength(n) <= MAX_PATH_PART))
      rmSync(join(lake, WAREHOUSE_SCHEMA[d.schema]!, name), { recursive: true, force: true });
}

/**
 * Columns an earlier version named otherwise (`Column.formerly`: a subgraph's, before `catalog/names.ts`), and their
 * exact texts, renamed in one transaction per table, each through a name of its own first, so that names that trade
 * places never meet; the dataset's lake files are rebuilt with the new names.
 */
async function renameColumns(w: TableStore, datasets: readonly Dataset[]): Promise<void> {
  const have = new Set(
    (await w.all("SELECT schema_name || '.' || table_name || '.' || column_name AS c FROM duckdb_columns()")).map((r) =>
      String(r.c),
    ),
  );
  for (const d of datasets) {
    const has = (c: string) => have.has(`${d.table}.${c}`);
    const pairs = d.columns.flatMap((c) =>
      c.formerly
        ? [[c.formerly.column, c.column] as const, ...(hasText(c) ? [[c.formerly.text, textColumn(c)] as const] : [])]
        : [],
    );
    const leaving = new Set(pairs.filter(([from, to]) => from !== to && has(from)).map(([from]) => from));
    const moves = pairs.filter(([from, to]) => from !== to && has(from) && (!has(to) || leaving.has(to)));
    if (!moves.length) continue;
    await w.transaction(async (tx) => {
      for (const [i, [from]] of moves.entries())
        await tx.exec(`ALTER TABLE ${qt(d.table)} RENAME COLUMN ${q(from)} TO ${q(`_renamed_${i}`)}`);
      for (const [i, [, to]] of moves.entries())
        await tx.exec(`ALTER TABLE ${qt(d.table)} RENAME COLUMN ${q(`_renamed_${i}`)} TO ${q(to)}`);
      await markLakeRebuild(tx, d);
    });
  }
  await w.exec('CHECKPOINT');
}

/** The exporter's own tables that name datasets (`renameTable`). */
const RENAMED_LEDGER = [
  'checkpoints',
  'shard_checkpoints',
  'run_tasks',
  'verifications',
  'snapshot_digests',
  'lake_pending',
];

/**
 * Column types that changed: lists of numbers and booleans were text (`VARCHAR[]`) before they were typed by their
 * element; a subgraph's `Timestamp` was BIGINT microseconds before it was TIMESTAMPTZ; its BigInt was DOUBLE before it
 * was DECIMAL(38,0); and a subgraph's `types` may retype a field either way. Each such column is cast in place from its
 * exact text where it has one (a BigInt beyond 38 digits becomes NULL in DECIMAL(38,0), its text kept), the text copied
 * first where the column had none, and the dataset's lake files are rebuilt (their column type changes). DuckDB alters
 * a table only in a transaction that has not changed its rows, so the copy and the cast are two: a process stopped
 * between them copies again (only texts still missing) and casts on its next start.
 */
export async function retypeColumns(w: TableStore, d: Dataset, have: ReadonlyMap<string, string>): Promise<void> {
  // DuckDB names TIMESTAMPTZ by its long name; a list of structs (the liquidity list's) never changes type.
  const changed = d.columns.filter((c) => {
    const p = have.get(`${d.table}.${c.column}`);
    return (
      c.cls !== 'structs' && p !== undefined && p !== sqlType(c).replaceAll('TIMESTAMPTZ', 'TIMESTAMP WITH TIME ZONE')
    );
  });
  if (!changed.length) return;
  const hadText = (c: Column) => have.has(`${d.table}.${textColumn(c)}`);
  await w.transaction(async (tx) => {
    for (const c of changed.filter((c) => hasText(c) && !hadText(c)))
      await tx.exec(
        `UPDATE ${qt(d.table)} SET ${q(textColumn(c))} = CAST(${q(c.column)} AS ${textType(c)}) WHERE ${q(textColumn(c))} IS NULL`,
      );
  });
  await w.transaction(async (tx) => {
    for (const c of changed) {
      const type = sqlType(c);
      await tx.exec(
        `ALTER TABLE ${qt(d.table)} ALTER COLUMN ${q(c.column)} SET DATA TYPE ${type} USING ${retypedValue(c, have.get(`${d.table}.${c.column}`)!, hadText(c))}`,
      );
    }
    await markLakeRebuild(tx, d);
  });
}

/** The expression that gives a retyped column its value of the new type, from its exact text where it has one. */
function retypedValue(c: Column, from: string, hadText: boolean): string {
  const col = q(c.column);
  const type = sqlType(c);
  const source = hadText ? q(textColumn(c)) : col;
  // An Int or BigInt of seconds (or milliseconds) made a time: from its exact text where it has one.
  if (c.cls === 'timestamp' && c.unit) return `make_timestamptz(CAST(${source} AS BIGINT) * ${MICROS[c.unit]})`;
  if (c.cls === 'timestamp' && from === 'BIGINT') return `make_timestamptz(${col})`;
  if (from === 'TIMESTAMP WITH TIME ZONE' && c.cls === 'int8') return `epoch_us(${col})`;
  // A time back to a number: the column no longer says in what unit it counted; the dataset is read again instead.
  if (from === 'TIMESTAMP WITH TIME ZONE')
    throw new Error(
      `${c.column} was a time and is to be a ${type} again, which cannot be done in place: pool-export reset the dataset --yes, and the next run reads it whole`,
    );
  // A BigInt beyond 38 digits is NULL by rule (`integer`); every other text was checked as its type when stored.
  const exactInteger = c.cls === 'integer' || (c.cls === 'list' && c.elem === 'integer');
  return `${exactInteger ? 'TRY_CAST' : 'CAST'}(${source} AS ${type})`;
}
