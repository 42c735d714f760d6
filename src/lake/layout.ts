/** Where each dataset's Parquet files live in the lake, and which of its columns become partition columns. */
import { join } from 'node:path';
import { type Dataset, WAREHOUSE_SCHEMA } from '../catalog/catalog.ts';
import { chainName } from '../config/chains.ts';

/** The lake folder inside the data folder. */
export const LAKE_DIR = 'lake';

/** The SQL expression of a row's UTC day, for date partitions. */
export function dayExpr(ds: Dataset): string {
  if (ds.kind === 'event') return 'strftime(to_timestamp(CAST("timestamp" AS BIGINT)), \'%Y-%m-%d\')';
  if (ds.kind === 'bucket')
    return `strftime(to_timestamp(CAST("${ds.seq === 'hour' ? 'hour' : 'date'}" AS BIGINT)), '%Y-%m-%d')`;
  return "strftime(coalesce(_taken_at, now()), '%Y-%m-%d')";
}

/** `<lake>/<schema>/<table>` of a dataset. */
export function datasetDir(lake: string, ds: Dataset): string {
  return join(lake, WAREHOUSE_SCHEMA[ds.schema]!, ds.table.split('.')[1]!);
}

/** The folder of one chain's files (current state, history or time partitions). */
export function chainDir(
  lake: string,
  of: { readonly ds: Dataset; readonly chainId: number },
  part: 'data' | 'current' | 'history',
): string {
  const { ds, chainId } = of;
  const base = datasetDir(lake, ds);
  const chain = `chain=${chainName(chainId)}`;
  return part === 'data' ? join(base, chain) : join(base, part, chain);
}

/** The glob that reads every file of a dataset's view (mutable datasets: their current state). */
export function viewGlob(lake: string, ds: Dataset): string {
  return ds.kind === 'mutable'
    ? join(datasetDir(lake, ds), 'current', '*', '*.parquet')
    : join(datasetDir(lake, ds), '*', '*', '*.parquet');
}
