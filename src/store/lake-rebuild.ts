/**
 * Marks a dataset's lake files to be rebuilt whole from the warehouse by the next lake step (`lake_pending` with
 * `rebuild`): every partition, from the first key, for every run whose rows the table keeps. Until then the lake keeps
 * serving its files as they are. Used where a table's rows or column types change outside a run's commit (a
 * migration, a retyped column, a subgraph refreshed).
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
     FROM ${qt(ds.table)} ${chainId === undefined ? '' : `WHERE chain_id = ${Math.trunc(chainId)}`} GROUP BY chain_id`,
    [ds.name],
  );
}
