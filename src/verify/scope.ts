/**
 * Which stored rows `verify` may check: those the runs had committed as of one block. A dataset's checkpoint names the
 * block its rows were read at; when the task that moved it there ended well, every row up to that block is stored,
 * and the counters at that block must match them all. When it did not (it failed, was stopped, or is still running),
 * only the rows before its cursor are complete: the days that end before it. A dataset whose first backfill is under
 * way (its shards are not merged) is not checked.
 */
import type { Dataset } from '../catalog/catalog.ts';
import type { Warehouse } from '../store/warehouse.ts';

const DAY = 86_400;

/** What may be checked of one dataset on one chain. */
export type Scope =
  | {
      readonly block: number;
      /** Whether every row up to `block` is stored (the whole table may be counted). */
      readonly complete: boolean;
      /** The last day (Unix seconds of its start) whose rows are all stored, or null when none is. */
      readonly lastDay: number | null;
    }
  | { readonly skip: string };

/** The scopes of every dataset on every chain, read in two queries (a run's verification plans 160 of them). */
export interface Scopes {
  of(chainId: number, ds: Dataset): Scope;
}

const key = (chainId: unknown, dataset: unknown) => `${String(chainId)}/${String(dataset)}`;

/**
 * Reads the checkpoints of `chains` (every chain's without), the status of the task that moved each, and the datasets
 * whose shards are not merged.
 */
export async function readScopes(w: Pick<Warehouse, 'all'>, chains?: readonly number[]): Promise<Scopes> {
  const on = (table: string) => (chains ? ` WHERE ${table}.chain_id IN (SELECT unnest(CAST($1 AS INTEGER[])))` : '');
  const params = chains ? [`[${chains.map(Number).join(',')}]`] : [];
  const sharded = new Set(
    (await w.all(`SELECT DISTINCT chain_id, dataset FROM _pool_export.shard_checkpoints s${on('s')}`, params)).map(
      (r) => key(r.chain_id, r.dataset),
    ),
  );
  const rows = await w.all(
    `SELECT c.chain_id, c.dataset, c.cursor, c.block, epoch(c.block_time) AS block_time,
            (SELECT t.status FROM _pool_export.run_tasks t
             WHERE t.run_id = c.run_id AND t.chain_id = c.chain_id AND t.dataset = c.dataset
             ORDER BY t.ended_at DESC LIMIT 1) AS status
     FROM _pool_export.checkpoints c${on('c')}`,
    params,
  );
  const checkpoints = new Map(rows.map((r) => [key(r.chain_id, r.dataset), r]));
  return {
    of(chainId: number, ds: Dataset): Scope {
      if (sharded.has(key(chainId, ds.name))) return { skip: 'its first backfill is under way' };
      const cp = checkpoints.get(key(chainId, ds.name));
      if (!cp || cp.block === null || cp.block_time === null) return { skip: 'it was never exported' };
      const block = Number(cp.block);
      if (cp.status === 'ok') return { block, complete: true, lastDay: Math.floor(Number(cp.block_time) / DAY) * DAY };
      const seq = (JSON.parse(String(cp.cursor)) as { seq?: string }).seq;
      if (seq === undefined || (ds.kind !== 'event' && ds.kind !== 'bucket'))
        return { block, complete: false, lastDay: null };
      // Events: rows before the cursor's time are stored. Buckets: rows before the cursor's bucket.
      const before = Number(seq);
      const lastDay = Math.floor(before / DAY) * DAY - DAY;
      return { block, complete: false, lastDay: lastDay >= 0 ? lastDay : null };
    },
  };
}

/** The scope of one dataset on one chain, from its checkpoint and the ledger. */
export async function scopeOf(w: Pick<Warehouse, 'all'>, chainId: number, ds: Dataset): Promise<Scope> {
  return (await readScopes(w, [chainId])).of(chainId, ds);
}
