/**
 * The lake's layout (version 2): where each dataset's Parquet files live, which columns they carry, and how they are
 * partitioned. Every file of a table has the same schema, so readers never need `union_by_name`.
 *
 * - events and buckets: `<schema>/<table>/chain=<name>/month=<YYYY-MM>/part-<nnnnn>.parquet`;
 * - snapshots and the liquidity list: the same, the month being that of the run that took them (`_taken_at`);
 * - mutable entities, their state now: `<schema>/<table>/chain=<name>/data.parquet`;
 * - mutable entities, the rows each run read: `<schema>/<table>_history/chain=<name>/month=<YYYY-MM>/part-<nnnnn>.parquet`,
 *   a table path of its own, so that a glob over the state never reads the history.
 *
 * Inside a month the files are in key order (events and buckets: their time, then `id`; the others: `_taken_at`, then
 * `id`), `part-00001` first, each of at most `FILE_ROWS` rows; the last one is the partition's open file, the one later
 * runs add to. Month partitions follow Dune's; the file size, DuckDB's advice on Parquet files (docs/lake.md).
 *
 * Columns: the warehouse's, in its order, with three changes for analysts: events and buckets carry `time`
 * (TIMESTAMP WITH TIME ZONE) beside their integer seconds; the exact upstream texts of numbers (`<column>_text` in the
 * warehouse) are one struct at the end, `_exact`, so that `SELECT *` shows one column for them rather than one per
 * number; the partition folders give `chain` and `month`.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Dataset, WAREHOUSE_SCHEMA } from '../catalog/catalog.ts';
import { textColumn } from '../catalog/column.ts';
import { CHAINS, chainFolder } from '../config/chains.ts';
import { hasText, sqlType, textType } from '../store/ddl.ts';
import { writeFileAtomic } from '../util/atomic-file.ts';
import { q } from '../util/sql.ts';

/** Files being written into a lake, and its publish journal: inside the lake's root, on its file system. */
export const lakeTmp = (lake: string): string => join(lake, '.tmp');

/** The layout this version writes and reads. */
export const LAYOUT_VERSION = 2;

/** The file in the lake's root that names its layout (absent in lakes written before layout 2). */
export const LAYOUT_FILE = '_layout.json';

/**
 * Rows per file, in a local lake and a bucket alike: a month's rows beyond it start another file. 250,000 swaps make a
 * file of about 50 MB; a run rewrites the open file of each month it adds to, and a full file only where the re-read
 * window reaches into it (keeping its key range, `key-ranges.ts`), so this also bounds what one run rewrites, and a
 * bucket lake uploads, per partition.
 */
export const FILE_ROWS = 250_000;

/** The layout of the lake in `lake`: its version, `1` for a lake of Parquet files with no layout file, null when empty. */
export function lakeLayout(lake: string): number | null {
  const file = join(lake, LAYOUT_FILE);
  if (existsSync(file)) return Number((JSON.parse(readFileSync(file, 'utf8')) as { layout?: unknown }).layout);
  return existsSync(lake) && hasParquetFile(lake) ? 1 : null;
}

function hasParquetFile(dir: string): boolean {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith('.')) continue;
    if (e.isFile() && e.name.endsWith('.parquet')) return true;
    if (e.isDirectory() && hasParquetFile(join(dir, e.name))) return true;
  }
  return false;
}

/** A dataset's table path: its rows (for mutable entities, their state now), or the rows each run read of them. */
export type TablePart = 'data' | 'history';

/** `<lake>/<schema>/<table>` (or `<table>_history`) of a dataset. */
export function tableDir(lake: string, ds: Dataset, part: TablePart = 'data'): string {
  const table = ds.table.split('.')[1]!;
  return join(lake, WAREHOUSE_SCHEMA[ds.schema]!, part === 'history' ? `${table}_history` : table);
}

/** The folder of one chain in a dataset's table path. */
export function chainDir(
  lake: string,
  of: { readonly ds: Dataset; readonly chainId: number },
  part: TablePart,
): string {
  return join(tableDir(lake, of.ds, part), `chain=${chainFolder(of.chainId)}`);
}

/** The chain id of a `chain=<name>` folder (a known chain's name, or an id). */
export function chainOfFolder(folder: string): number {
  const name = folder.slice('chain='.length);
  return CHAINS[name] ?? Number(name);
}

/**
 * Whether a dataset has a history table path (`<table>_history`, the rows each run read): a mutable entity's, but not
 * an immutable entity's read as one (by id and `_change_block`: a subgraph's immutable entity without a time in
 * seconds, a timeseries), whose rows never change, so that its history would repeat its state.
 */
export function hasHistory(ds: Dataset): boolean {
  return ds.kind === 'mutable' && !ds.immutable;
}

/** Whether a table path is partitioned by month below its chains (every one but the state of mutable entities). */
export function byMonth(ds: Dataset, part: TablePart): boolean {
  return ds.kind !== 'mutable' || part === 'history';
}

/** The glob of every file of a table path. */
export function tableGlob(lake: string, ds: Dataset, part: TablePart = 'data'): string {
  return byMonth(ds, part)
    ? join(tableDir(lake, ds, part), '*', '*', '*.parquet')
    : join(tableDir(lake, ds, part), '*', '*.parquet');
}

/** The warehouse column of a dataset's time (`timestamp`, `date`, `hour`), for events and buckets. */
export function seqColumn(ds: Dataset): string | undefined {
  return ds.kind === 'event' || ds.kind === 'bucket' ? ds.columns.find((c) => c.field === ds.seq)!.column : undefined;
}

/** The order of a state file's rows: by `id` (one row each). */
export const STATE_KEY = '"id"';

/**
 * The order of rows in a month (and the key the run's rewrite starts from): events and buckets by their time, then
 * `id`; the others by when they were taken, then `id`, then the block and run that read them, so that the versions of
 * an id in a history (or of a snapshot row read by several runs) are in the order they were read, whichever way the
 * file was written. (Their time taken is null where the upstream gives none: `id` alone left their order to the sort.)
 */
export function orderKey(ds: Dataset, part: TablePart): string {
  const seq = part === 'data' ? seqColumn(ds) : undefined;
  return seq ? `${q(seq)}, "id"` : '"_taken_at", "id", "_block", "_run_id"';
}

/**
 * The SQL of a row's month (`YYYY-MM`, UTC) over a relation with the warehouse's columns: the month of its time
 * (events and buckets) or of when it was taken. From the integer seconds, so that no time zone setting is involved.
 */
export function monthExpr(ds: Dataset, part: TablePart): string {
  const seq = part === 'data' ? seqColumn(ds) : undefined;
  const micros = seq
    ? `CAST(${q(seq)} AS BIGINT) * 1000000`
    : 'epoch_us(coalesce("_taken_at", CAST(now() AS TIMESTAMPTZ)))';
  return `strftime(make_timestamp(${micros}), '%Y-%m')`;
}

/**
 * The SELECT list that turns a relation with the warehouse's columns (a warehouse table, or a file of layout 1) into
 * the lake's columns, each cast to its catalog type; a column the relation lacks (`has`: a file of an older version
 * that did not read that field yet) is NULL.
 */
export function lakeSelect(ds: Dataset, has: (column: string) => boolean = () => true): string {
  const seq = seqColumn(ds);
  const col = (name: string, type: string) => `CAST(${has(name) ? q(name) : 'NULL'} AS ${type}) AS ${q(name)}`;
  const cols: string[] = [];
  for (const c of ds.columns) {
    cols.push(col(c.column, sqlType(c)));
    if (c.column === seq) cols.push(`to_timestamp(CAST(${q(seq)} AS BIGINT)) AS "time"`);
  }
  cols.push('CAST("chain_id" AS INTEGER) AS "chain_id"', col('_block', 'BIGINT'), col('_run_id', 'VARCHAR'));
  cols.push(col('_taken_at', 'TIMESTAMPTZ'));
  const texts = ds.columns.filter(hasText);
  if (texts.length > 0) {
    const text = (c: (typeof texts)[number]) => (has(textColumn(c)) ? q(textColumn(c)) : 'NULL');
    cols.push(
      `struct_pack(${texts.map((c) => `${q(c.column)} := CAST(${text(c)} AS ${textType(c)})`).join(', ')}) AS "_exact"`,
    );
  }
  return cols.join(', ');
}

/** Writes the layout file of a lake root. */
export function writeLayoutFile(root: string): void {
  mkdirSync(root, { recursive: true });
  writeFileAtomic(join(root, LAYOUT_FILE), `${JSON.stringify({ layout: LAYOUT_VERSION })}\n`);
}

/** The month (`YYYY-MM`, UTC) of a time in seconds. */
export const monthOf = (secs: number) => new Date(secs * 1000).toISOString().slice(0, 7);

/** The first second of a month. */
export const monthStart = (month: string) => Date.parse(`${month}-01T00:00:00Z`) / 1000;
