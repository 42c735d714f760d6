/**
 * What the lake lacks (`_pool_export.lake_pending`), as the lake write reads it: an entry per dataset and chain, and
 * the months that the rows of the entries' runs fall in, found for every entry of snapshots, the liquidity list and
 * mutable history at once: one scan of each table for all its chains, where each entry used to scan its table for its
 * own chain (on the demo's 8 chains after 100 blocks, 121 statements of 5-12 ms each, the largest part of the lake
 * write after its COPYs). The tables' statements are one, so that the lake's lanes start sooner: one per table were 16
 * statements and 150 ms before the first COPY, beside the warehouse's checkpoint.
 */
import type { Dataset } from '../catalog/catalog.ts';
import type { Sql } from '../store/sql-port.ts';
import { lit, q, qt } from '../util/sql.ts';
import { hasHistory, monthExpr, seqColumn } from './layout.ts';

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
  /**
   * Snapshots, the list and mutable history: the months of the rows of `runs`. Events and buckets: the months of the
   * rows from `seqFrom` on. Read for every entry at once; undefined where that failed or the entry reads its own.
   */
  readonly months?: readonly string[] | undefined;
  /**
   * Snapshots, the list and mutable history: the rows of `runs` on this chain, read with `months`; undefined where
   * those were not read.
   */
  readonly runRows?: number | undefined;
  /**
   * Events and buckets (not rebuilt): the second the write starts at: `fromSeq`, or else the first second of the rows
   * of `runs` (null: none is stored, nothing to write). Undefined where the entry reads its own.
   */
  readonly seqFrom?: number | null | undefined;
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
  const months = await runMonths(w, known).catch(() => new Map<string, { months: string[]; rows: number }>());
  const seqs = await seqMonths(w, known).catch(() => new Map<string, { from: number | null; months: string[] }>());
  return rows.map((r) => {
    const seq = r.ds && seqs.get(monthsKey(r.ds, r.chainId));
    if (seq) return { ...r, months: seq.months, seqFrom: seq.from };
    const run = r.ds && months.get(monthsKey(r.ds, r.chainId));
    return { ...r, months: run?.months, runRows: run?.rows };
  });
}

/** The key of an entry in the maps `runMonths` and `seqMonths` return. */
const monthsKey = (ds: Dataset, chainId: number) => `${ds.name}/${chainId}`;

/**
 * The months of the rows of each entry's runs (entries of events and buckets, and rebuilds, left out: they find
 * their months otherwise), keyed by `monthsKey`, in month order, and how many rows those are. Entries of one table
 * with the same runs share one part of the statement.
 */
async function runMonths(
  w: Sql,
  entries: readonly Pending[],
): Promise<Map<string, { months: string[]; rows: number }>> {
  const groups = new Map<string, { ds: Dataset; runs: readonly string[]; chains: number[] }>();
  for (const e of entries) {
    if (e.rebuild || e.ds.kind === 'event' || e.ds.kind === 'bucket' || (e.ds.kind === 'mutable' && !hasHistory(e.ds)))
      continue;
    const key = `${e.ds.name}\u0000${JSON.stringify(e.runs)}`;
    const g = groups.get(key) ?? { ds: e.ds, runs: e.runs, chains: [] };
    g.chains.push(e.chainId);
    groups.set(key, g);
  }
  const months = new Map<string, { months: string[]; rows: number }>();
  const parts = [...groups.values()].map(({ ds, runs, chains }, g) => {
    for (const c of chains) months.set(monthsKey(ds, c), { months: [], rows: 0 });
    const part = ds.kind === 'mutable' ? 'history' : 'data';
    const inRuns = runs.length > 0 ? runs.map(lit).join(', ') : 'NULL';
    return `SELECT ${g} AS g, chain_id, ${monthExpr(ds, part)} AS m, count(*) AS n FROM ${qt(ds.table)} WHERE chain_id IN (${chains.map(Number).join(', ')}) AND _run_id IN (${inRuns}) GROUP BY ALL`;
  });
  if (parts.length === 0) return months;
  const ds = [...groups.values()].map((g) => g.ds);
  for (const r of await w.all(`${parts.join(' UNION ALL ')} ORDER BY g, chain_id, m`)) {
    const e = months.get(monthsKey(ds[Number(r.g)]!, Number(r.chain_id)));
    e?.months.push(String(r.m));
    if (e) e.rows += Number(r.n);
  }
  return months;
}

/**
 * Events and buckets not rebuilt: where each entry's write starts (its `fromSeq`, or else the first second of its runs'
 * rows) and the months of the rows from there on, keyed by `monthsKey`, in one statement for every entry: one entry
 * at a time, two statements each, they were 28 statements in the lake write after 100 new blocks on the demo's 8
 * chains, beside the warehouse's checkpoint. `from` null: no row of the runs is stored.
 */
async function seqMonths(
  w: Sql,
  entries: readonly Pending[],
): Promise<Map<string, { from: number | null; months: string[] }>> {
  const of = entries.filter((e) => (e.ds.kind === 'event' || e.ds.kind === 'bucket') && !e.rebuild);
  const found = new Map(
    of.map((e) => [monthsKey(e.ds, e.chainId), { from: null as number | null, months: [] as string[] }]),
  );
  if (of.length === 0) return found;
  const parts = of.map((e, g) => {
    const [seq, chain] = [q(seqColumn(e.ds)!), Number(e.chainId)];
    const inRuns = e.runs.length > 0 ? e.runs.map(lit).join(', ') : 'NULL';
    const from =
      e.fromSeq !== null
        ? `CAST(${Number(e.fromSeq)} AS BIGINT)`
        : `(SELECT min(CAST(${seq} AS BIGINT)) FROM ${qt(e.ds.table)} WHERE chain_id = ${chain} AND _run_id IN (${inRuns}))`;
    return `SELECT DISTINCT ${g} AS g, f.s AS s, ${monthExpr(e.ds, 'data')} AS m FROM (SELECT ${from} AS s) f LEFT JOIN ${qt(e.ds.table)} t ON t.chain_id = ${chain} AND t.${seq} >= f.s`;
  });
  for (const r of await w.all(`${parts.join(' UNION ALL ')} ORDER BY g, m`)) {
    const e = found.get(monthsKey(of[Number(r.g)]!.ds, of[Number(r.g)]!.chainId))!;
    e.from = r.s === null ? null : Number(r.s);
    if (r.m !== null) e.months.push(String(r.m));
  }
  return found;
}
