/**
 * The warehouse's schema version, and the migrations that bring a warehouse written by an earlier version up to it.
 *
 * - 1: numbers as DECIMAL(38,18) and HUGEINT, NULL when a value did not fit (no version recorded).
 * - 2: BigDecimal and raw BigInt amounts as DOUBLE, other BigInts as BIGINT (see `store/ddl.ts`); never NULL for a
 *   value sent. Migrating recomputes every numeric column from its exact `_text` twin, then has the lake rebuilt.
 *
 * A migration runs in one transaction when a run (or `pool-export migrate`) first opens the warehouse for writing;
 * a read-only open of an older warehouse stops with an error that names the command.
 */
import { type Column, DATASETS } from '../catalog/catalog.ts';
import { textColumn } from '../catalog/column.ts';
import { lit, q, qt } from '../util/sql.ts';
import { hasText, sqlType, tableColumns } from './ddl.ts';
import { markLakeRebuild } from './lake-rebuild.ts';

/** The schema version this code writes. */
export const SCHEMA_VERSION = 2;

/** The statements a migration step may run: an open transaction. */
export interface MigrationTx {
  exec(sql: string, params?: (string | number | null)[]): Promise<number>;
  all(sql: string, params?: (string | number | null)[]): Promise<Record<string, unknown>[]>;
}

/** Dataset tables present in the warehouse, as `schema.table`. */
export async function presentTables(tx: Pick<MigrationTx, 'all'>): Promise<Set<string>> {
  const rows = await tx.all("SELECT schema_name || '.' || table_name AS t FROM duckdb_tables() WHERE NOT internal");
  return new Set(rows.map((r) => String(r.t)));
}

/**
 * The recorded schema version; for a warehouse with no record, 1 when it holds any dataset table or checkpoint (it
 * was written before versions were recorded), or undefined when it is new.
 */
export async function readVersion(tx: MigrationTx): Promise<number | undefined> {
  const tables = await presentTables(tx);
  const meta = tables.has('_pool_export.meta')
    ? await tx.all("SELECT value FROM _pool_export.meta WHERE key = 'schema_version'")
    : [];
  if (meta[0]) return Number(meta[0].value);
  return DATASETS.some((d) => tables.has(d.table)) ? 1 : undefined;
}

/** Records the schema version. */
export async function writeVersion(tx: MigrationTx, version: number): Promise<void> {
  await tx.exec("INSERT OR REPLACE INTO _pool_export.meta (key, value) VALUES ('schema_version', $1)", [
    String(version),
  ]);
}

/** The numeric columns whose type a warehouse of version 1 holds otherwise, with the expression that recomputes them. */
function retyped(c: Column): { type: string; using: string } | undefined {
  if (c.cls === 'int8') return { type: sqlType(c), using: `CAST(${q(c.column)} AS BIGINT)` };
  if (!hasText(c) || c.cls === 'list') return undefined;
  return { type: sqlType(c), using: `CAST(${q(textColumn(c))} AS ${sqlType(c)})` };
}

/**
 * Version 1 → 2: every numeric column becomes DOUBLE or BIGINT, recomputed from its exact text, so that values that
 * were NULL for being out of DECIMAL/HUGEINT range are numbers; then every dataset's lake files are marked for a
 * rebuild (their Parquet types change with the tables').
 */
async function toVersion2(tx: MigrationTx): Promise<void> {
  const tables = await presentTables(tx);
  const types = new Map(
    (
      await tx.all(
        "SELECT schema_name || '.' || table_name || '.' || column_name AS c, data_type AS t FROM duckdb_columns() WHERE NOT internal",
      )
    ).map((r) => [String(r.c), String(r.t)]),
  );
  for (const ds of DATASETS.filter((d) => tables.has(d.table))) {
    // Fields the catalog reads now and did not then (the liquidity list's): new columns, NULL in older rows.
    for (const [name, type] of tableColumns(ds))
      if (!types.has(`${ds.table}.${name}`)) await tx.exec(`ALTER TABLE ${qt(ds.table)} ADD COLUMN ${q(name)} ${type}`);
    for (const c of ds.columns) {
      const to = retyped(c);
      const have = types.get(`${ds.table}.${c.column}`);
      if (!to || have === undefined || have === to.type) continue;
      await tx.exec(
        `ALTER TABLE ${qt(ds.table)} ALTER COLUMN ${q(c.column)} SET DATA TYPE ${to.type} USING ${to.using}`,
      );
    }
    // Every partition of the dataset is rewritten, from the first key and for every run whose rows it keeps.
    await markLakeRebuild(tx, ds);
  }
  // Versions 1 read mutable entities by updatedAt alone, which misses rows whose updatedAt is null or did not move
  // (maintainer fees and earnings, LP tokens): their next run reads every row again, then goes on incrementally.
  const mutable = DATASETS.filter((d) => d.kind === 'mutable').map((d) => d.name);
  await tx.exec(
    `UPDATE _pool_export.checkpoints SET cursor = json_object('mode', 'full', 'id', '', 'block', block)::VARCHAR WHERE dataset IN (${mutable.map(lit).join(', ')})`,
  );
  // The per-column counts of values that did not fit DECIMAL/HUGEINT: there are none any more.
  if (types.has('_pool_export.run_tasks.out_of_range'))
    await tx.exec('ALTER TABLE _pool_export.run_tasks DROP COLUMN out_of_range');
  await tx.exec('DROP MACRO IF EXISTS pe_dec');
  await tx.exec('DROP MACRO IF EXISTS pe_dec_abs');
}

/**
 * Changes to the exporter's own tables that need no new schema version, run at every writable open in the upgrade's
 * transaction (each is idempotent): checkpoints of backfill shards, kept by older versions as `<dataset>#<k>/<n>` rows
 * of `checkpoints`, move to `shard_checkpoints`.
 */
export async function migrateLedger(tx: MigrationTx): Promise<void> {
  const pattern = lit('^(.+)#(\\d+)/(\\d+)$');
  await tx.exec(
    `INSERT INTO _pool_export.shard_checkpoints (chain_id, dataset, shard, shards, cursor, block, block_time, run_id, updated_at)
     SELECT chain_id, regexp_extract(dataset, ${pattern}, 1), CAST(regexp_extract(dataset, ${pattern}, 2) AS INTEGER),
            CAST(regexp_extract(dataset, ${pattern}, 3) AS INTEGER), cursor, block, block_time, run_id, updated_at
     FROM _pool_export.checkpoints WHERE regexp_matches(dataset, ${pattern})`,
  );
  await tx.exec(`DELETE FROM _pool_export.checkpoints WHERE regexp_matches(dataset, ${pattern})`);
}

/** The steps, by the version they produce. */
const STEPS: Readonly<Record<number, (tx: MigrationTx) => Promise<void>>> = { 2: toVersion2 };

/** Brings a warehouse at `from` up to SCHEMA_VERSION, step by step, inside the caller's transaction. */
export async function migrate(tx: MigrationTx, from: number): Promise<void> {
  for (let v = from + 1; v <= SCHEMA_VERSION; v++) await STEPS[v]!(tx);
  await writeVersion(tx, SCHEMA_VERSION);
}
