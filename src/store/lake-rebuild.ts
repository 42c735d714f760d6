/**
 * Marks a dataset's lake files to be rebuilt whole from the warehouse by the next lake step (`lake_pending` with
 * `rebuild`): every partition, from the first key, for every run whose rows the table keeps. Until then the lake keeps
 * serving its files as they are. Used where a table's rows or column types change outside a run's commit (a
 * migration, a retyped column, a subgraph refreshed). And empties a dataset for the next run to read it whole
 * (`subgraph refresh`, `reset`).
 */
import type { Dataset } from '../catalog/catalog.ts';
import { qt } from '../util/sql.ts';

/** The statements it needs: an open transaction. */
interface Tx {
  exec(sql: string, params?: (string | number | null)[]): Promise<number>;
}

/** Marks every chain of `ds` that holds rows (or only `chainId`) for a rebuild of its lake files. */
export async function markLakeRebuild(tx: Tx, ds: Pick<Dataset, 'name' | 'table'>, chainId?: number): Promise<void> {
  await tx.exec(
    `INSERT OR REPLACE INTO _pool_export.lake_pending (chain_id, dataset, from_seq, runs, rebuild)
     SELECT chain_id, $1, 0, coalesce(list(DISTINCT _run_id) FILTER (WHERE _run_id IS NOT NULL), []), true
     FROM ${qt(ds.table)} WHERE true${onChain(chainId)} GROUP BY chain_id`,
    [ds.name],
  );
}

/** Whose rows a statement takes: a dataset's, on one chain or on all. */
const onChain = (chainId: number | undefined) =>
  chainId === undefined ? '' : ` AND chain_id = ${Math.trunc(chainId)}`;

/**
 * Deletes a dataset's rows and its checkpoints (the backfill shards' too), on one chain or on all: the next run reads
 * it whole. Its lake files are left to the caller (rebuilt from what the next run reads, or removed).
 */
export async function forgetRows(tx: Tx, ds: Pick<Dataset, 'name' | 'table'>, chainId?: number): Promise<void> {
  for (const t of ['checkpoints', 'shard_checkpoints'])
    await tx.exec(`DELETE FROM _pool_export.${t} WHERE dataset = $1${onChain(chainId)}`, [ds.name]);
  await tx.exec(`DELETE FROM ${qt(ds.table)} WHERE true${onChain(chainId)}`);
}

/**
 * Empties a dataset (on one chain or on all) for the next run to read it whole, its lake files marked to be rebuilt
 * from what that run reads: until then the lake keeps serving the old rows.
 */
export async function emptyForReread(tx: Tx, ds: Pick<Dataset, 'name' | 'table'>, chainId?: number): Promise<void> {
  await markLakeRebuild(tx, ds, chainId);
  await forgetRows(tx, ds, chainId);
}

/**
 * Deletes a removed subgraph's data from the warehouse: its schema with every table, and its datasets' rows in the
 * exporter's own tables (checkpoints, shards, pending lake writes, snapshot digests). The run ledger keeps its history.
 * Its lake folder is left to the caller.
 */
export async function dropSubgraphData(tx: Tx, schema: string): Promise<void> {
  await tx.exec(`DROP SCHEMA IF EXISTS ${qt(schema)} CASCADE`);
  for (const t of ['checkpoints', 'shard_checkpoints', 'lake_pending', 'snapshot_digests'])
    await tx.exec(`DELETE FROM _pool_export.${t} WHERE starts_with(dataset, $1)`, [`${schema}.`]);
}
