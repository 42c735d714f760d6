/**
 * What the lake lacks (`_pool_export.lake_pending`), as the lake write reads it: an entry per dataset and chain, and
 * the months that the rows of the entries' runs fall in, found for every entry of snapshots, the liquidity list and
 * mutable history at once: one scan of each table for all its chains, where each entry used to scan its table for its
 * own chain (on the demo's 8 chains after 100 blocks, 121 statements of 5-12 ms each, the largest part of the lake
 * write after its COPYs).
 */
import type { Dataset } from '../catalog/catalog.ts';
import type { Sql } from '../store/warehouse.ts';
import { lit, qt } from '../util/sql.ts';
import { hasHistory, monthExpr } from './layout.ts';

/** What the lake lacks for one dataset and chain (a row of `_pool_export.lake_pending`). */
export interface Pending {
  readonly ds: Dataset;
  readonly chainId: number;
  /** Events and buckets: the first second whose rows changed (null: only rows of `runs`). */
  readonly fromSeq: number | null;
  readonly runs: readonly string[];
  /** Rewrite every file of the dataset and chain (after a change of column types). */
  readonly rebuild: boolean;
  /** Rows of other runs may have left the table on this chain since the lake was written (`lake_pending.dropped`). */
  readonly dropped: boolean;
  /** The months of the rows of `runs`, where they were read for several entries at once. */
  readonly months?: readonly string[] | undefined;
}

/**
 * The pending entries, in the order of their dataset and chain; `ds` undefined for a dataset this version does not
 * know. Should the months' statements fail, each entry reads its own.
 */
export async function readPending(
  w: Sql,
  byName: ReadonlyMap<string, Dataset>,
): Promise<(Omit<Pending, 'ds'> & { readonly name: string; readonly ds: Dataset | undefined })[]> {
  const rows = (
    await w.all(
      'SELECT chain_id, dataset, from_seq, runs, coalesce(rebuild, false) AS rebuild, coalesce(dropped, true) AS dropped FROM _pool_export.lake_pending ORDER BY dataset, chain_id',
    )
  ).map((r) => ({
    name: String(r.dataset),
    ds: byName.get(String(r.dataset)),
    chainId: Number(r.chain_id),
    fromSeq: r.from_seq === null ? null : Number(r.from_seq),
    runs: (r.runs as unknown[]).map(String),
    rebuild: r.rebuild === true,
    dropped: r.dropped !== false,
  }));
  const known = rows.filter((r): r is typeof r & { ds: Dataset } => r.ds !== undefined);
  const months = await runMonths(w, known).catch(() => new Map<string, string[]>());
  return rows.map((r) => ({ ...r, months: r.ds && months.get(monthsKey(r.ds, r.chainId)) }));
}

/** The key of an entry in the map `runMonths` returns. */
const monthsKey = (ds: Dataset, chainId: number) => `${ds.name}/${chainId}`;

/**
 * The months of the rows of each entry's runs (entries of events and buckets, and rebuilds, left out: they find
 * their months otherwise), keyed by `monthsKey`. Entries of one table with the same runs share one statement.
 */
async function runMonths(w: Sql, entries: readonly Pending[]): Promise<Map<string, string[]>> {
  const groups = new Map<string, { ds: Dataset; runs: readonly string[]; chains: number[] }>();
  for (const e of entries) {
    if (e.rebuild || e.ds.kind === 'event' || e.ds.kind === 'bucket' || (e.ds.kind === 'mutable' && !hasHistory(e.ds)))
      continue;
    const key = `${e.ds.name}\u0000${JSON.stringify(e.runs)}`;
    const g = groups.get(key) ?? { ds: e.ds, runs: e.runs, chains: [] };
    g.chains.push(e.chainId);
    groups.set(key, g);
  }
  const months = new Map<string, string[]>();
  for (const { ds, runs, chains } of groups.values()) {
    for (const c of chains) months.set(monthsKey(ds, c), []);
    const part = ds.kind === 'mutable' ? 'history' : 'data';
    const inRuns = runs.length > 0 ? runs.map(lit).join(', ') : 'NULL';
    for (const r of await w.all(
      `SELECT DISTINCT chain_id, ${monthExpr(ds, part)} AS m FROM ${qt(ds.table)} WHERE chain_id IN (${chains.map(Number).join(', ')}) AND _run_id IN (${inRuns})`,
    ))
      months.get(monthsKey(ds, Number(r.chain_id)))?.push(String(r.m));
  }
  return months;
}
