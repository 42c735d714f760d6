/**
 * Checkpoints: where each (chain, dataset) task stands, and each shard of a backfill under way. Written only inside the
 * transaction that commits their rows, by compare-and-set: a move from a checkpoint that is no longer there changes no
 * row, which is how a second writer is detected.
 */
import type { Dataset } from '../catalog/catalog.ts';
import { qt } from '../util/sql.ts';
import type { Warehouse } from './warehouse.ts';

/** A committed checkpoint. */
export interface Checkpoint {
  readonly cursor: string;
  readonly block: number | null;
}

/** The committed checkpoint of one shard of a backfill: shard `shard` (1-based) of `shards`. */
export interface ShardCheckpoint {
  readonly shard: number;
  readonly shards: number;
  readonly cursor: string;
}

/** Which checkpoint a move concerns: a dataset's own on a chain, or one shard's of its backfill. */
export interface CheckpointKey {
  readonly chainId: number;
  readonly dataset: string;
  readonly shard?: { readonly shard: number; readonly shards: number };
}

/** A checkpoint move from `prev` (null: none yet) to `next`, at a block, by a run. */
export interface CheckpointMove {
  readonly prev: string | null;
  readonly next: string;
  readonly block: { readonly number: number | null; readonly time: string | null };
  readonly runId: string;
}

type Statement = { sql: string; params: (string | number | null)[] };

/**
 * The statement of a compare-and-set move. It changes exactly one row when the checkpoint stood at `prev`; zero when
 * another writer moved it (or created it) first: `INSERT … ON CONFLICT DO NOTHING` and `UPDATE … WHERE cursor = prev`.
 */
export function checkpointStatement(key: CheckpointKey, move: CheckpointMove): Statement {
  const { chainId, dataset, shard } = key;
  // The key columns of the row moved, then the columns a move sets; one statement shape serves both tables.
  const [table, keys, keyValues] = shard
    ? ['shard_checkpoints', ['chain_id', 'dataset', 'shard', 'shards'], [chainId, dataset, shard.shard, shard.shards]]
    : ['checkpoints', ['chain_id', 'dataset'], [chainId, dataset]];
  const set = ['cursor', 'block', 'run_id', 'block_time'];
  const params = [...keyValues, move.next, move.block.number, move.runId, move.block.time];
  const $ = (i: number) => `$${i + 1}${i === params.length - 1 ? '::TIMESTAMPTZ' : ''}`;
  if (move.prev === null) {
    const columns = [...keys, ...set];
    return {
      sql: `INSERT INTO _pool_export.${table} (${columns.join(', ')}) VALUES (${columns.map((_, i) => $(i)).join(', ')}) ON CONFLICT DO NOTHING`,
      params,
    };
  }
  const assign = set.map((c, i) => `${c} = ${$(keys.length + i)}`).join(', ');
  const where = keys.map((c, i) => `${c} = $${i + 1}`).join(' AND ');
  return {
    sql: `UPDATE _pool_export.${table} SET ${assign}, updated_at = now() WHERE ${where} AND cursor = $${params.length + 1}`,
    params: [...params, move.prev],
  };
}

/**
 * One statement for several compare-and-set moves of distinct checkpoints of one table (all shards', or all datasets'
 * own), each from a checkpoint that exists (`prev` not null). It changes as many rows as there are moves when every
 * checkpoint stood at its `prev`; fewer when another writer moved one first. The moves travel as one JSON parameter.
 */
export function checkpointMovesStatement(
  moves: readonly { readonly key: CheckpointKey; readonly move: CheckpointMove }[],
): Statement {
  const shards = moves.length > 0 && moves[0]!.key.shard !== undefined;
  if (moves.some((m) => m.move.prev === null || (m.key.shard !== undefined) !== shards))
    throw new Error('checkpointMovesStatement takes moves of one table, each from an existing checkpoint');
  const ids = moves.map(({ key }) => JSON.stringify([key.chainId, key.dataset, key.shard?.shard ?? null]));
  if (new Set(ids).size !== ids.length) throw new Error('checkpointMovesStatement takes one move per checkpoint');
  const [table, keys] = shards
    ? ['shard_checkpoints', ['chain_id', 'dataset', 'shard', 'shards']]
    : ['checkpoints', ['chain_id', 'dataset']];
  const json = moves.map(({ key, move }) => ({
    chain_id: key.chainId,
    dataset: key.dataset,
    ...(key.shard ? { shard: key.shard.shard, shards: key.shard.shards } : {}),
    prev: move.prev,
    next: move.next,
    block: move.block.number,
    run_id: move.runId,
    block_time: move.block.time,
  }));
  const types = {
    chain_id: 'INTEGER',
    dataset: 'VARCHAR',
    ...(shards ? { shard: 'INTEGER', shards: 'INTEGER' } : {}),
    prev: 'VARCHAR',
    next: 'VARCHAR',
    block: 'BIGINT',
    run_id: 'VARCHAR',
    block_time: 'VARCHAR',
  };
  const where = keys.map((c) => `t.${c} = m.${c}`).join(' AND ');
  return {
    sql: `UPDATE _pool_export.${table} AS t SET cursor = m.next, block = m.block, run_id = m.run_id, block_time = m.block_time::TIMESTAMPTZ, updated_at = now()
      FROM (SELECT unnest(from_json($1, '[${JSON.stringify(types)}]'), recursive := true)) AS m WHERE ${where} AND t.cursor = m.prev`,
    params: [JSON.stringify(json)],
  };
}

/** The statement that drops a dataset's shard checkpoints once they are merged into its own. */
export function dropShardsStatement(chainId: number, dataset: string): Statement {
  return {
    sql: 'DELETE FROM _pool_export.shard_checkpoints WHERE chain_id = $1 AND dataset = $2',
    params: [chainId, dataset],
  };
}

/** Reads checkpoints, and the ids a dataset's recent runs stored. */
export class CheckpointStore {
  /** Checkpoints read by `preload` and not asked for yet, by `<chainId>/<dataset>`. */
  private loaded: Map<string, Checkpoint> | undefined;

  constructor(private readonly w: Warehouse) {}

  /** The committed checkpoint of a task, if any. */
  async get(chainId: number, dataset: string): Promise<Checkpoint | undefined> {
    const key = `${chainId}/${dataset}`;
    if (this.loaded?.has(key)) {
      const cp = this.loaded.get(key);
      this.loaded.delete(key);
      return cp;
    }
    const sql = 'SELECT cursor, block FROM _pool_export.checkpoints WHERE chain_id = $1 AND dataset = $2';
    const r = (await this.w.all(sql, [chainId, dataset]))[0];
    return r ? { cursor: String(r.cursor), block: r.block === null ? null : Number(r.block) } : undefined;
  }

  /**
   * Reads every checkpoint at once: the next `get` of each is answered from what was read (once; later ones read the
   * warehouse again). A run whose tasks each read their checkpoint at their start asks once, not once per task.
   */
  async preload(): Promise<void> {
    const rows = await this.w.all('SELECT chain_id, dataset, cursor, block FROM _pool_export.checkpoints');
    this.loaded = new Map(
      rows.map((r) => [
        `${r.chain_id}/${r.dataset}`,
        { cursor: String(r.cursor), block: r.block === null ? null : Number(r.block) },
      ]),
    );
  }

  /**
   * By `<chainId>/<dataset>`, the checkpoint of each task whose last read ended well, with the head its route stood at
   * then (`<number>:<hash>`):
   * the run that last moved the checkpoint finished the task (`ok` in the ledger, with the head), and no backfill's
   * shards are under way. Undefined otherwise (a run stopped or failed after moving it, or none yet): such a task has
   * more to read, whatever the head.
   */
  async complete(): Promise<Map<string, { cursor: string; head: string }>> {
    const rows = await this.w.all(
      `SELECT c.chain_id, c.dataset, c.cursor, t.head FROM _pool_export.checkpoints c
       JOIN _pool_export.run_tasks t ON t.run_id = c.run_id AND t.chain_id = c.chain_id AND t.dataset = c.dataset
       WHERE t.status = 'ok' AND t.head IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM _pool_export.shard_checkpoints s WHERE s.chain_id = c.chain_id AND s.dataset = c.dataset)`,
    );
    return new Map(rows.map((r) => [`${r.chain_id}/${r.dataset}`, { cursor: String(r.cursor), head: String(r.head) }]));
  }

  /**
   * Ids of a dataset's stored rows on a chain that runs read at block `from` or later, other than run `exceptRun`: the
   * rows that may hold entities of blocks a reorg reverted since.
   */
  async idsReadSince(
    chainId: number,
    ds: Dataset,
    at: { readonly from: number; readonly exceptRun: string },
  ): Promise<string[]> {
    const ids = await this.idsReadSinceAll([{ chainId, ds, from: at.from }], at.exceptRun);
    return ids.get(`${chainId}/${ds.name}`)!;
  }

  /**
   * `idsReadSince` of many datasets and chains at once, by `<chainId>/<dataset>`: one statement for all their tables
   * (a run's first requests asked each of 22 tables on 8 chains apart, 176 statements one after the other before the
   * first request went out; then one per table, 26 statements and 80 ms after 100 new blocks on the demo's 8 chains).
   * Tables of `Int8` ids go in a statement of their own, so that every id keeps its column's type and order.
   */
  async idsReadSinceAll(
    asks: readonly { readonly chainId: number; readonly ds: Dataset; readonly from: number }[],
    exceptRun: string,
  ): Promise<Map<string, string[]>> {
    const ids = new Map<string, string[]>();
    const byTable = new Map<string, (typeof asks)[number][]>();
    for (const a of asks) {
      ids.set(`${a.chainId}/${a.ds.name}`, []);
      byTable.set(a.ds.table, [...(byTable.get(a.ds.table) ?? []), a]);
    }
    const tables = [...byTable.values()];
    for (const int of [false, true]) {
      const of = tables.filter((t) => (t[0]!.ds.idType === 'Int8') === int);
      if (of.length === 0) continue;
      const params: (string | number)[] = [exceptRun];
      const parts = of.map((t, g) => {
        const where = t
          .map((a) => {
            params.push(a.chainId, a.from);
            return `(chain_id = $${params.length - 1} AND _block >= $${params.length})`;
          })
          .join(' OR ');
        return `SELECT ${g} AS g, chain_id, id FROM ${qt(t[0]!.ds.table)} WHERE _run_id IS DISTINCT FROM $1 AND (${where})`;
      });
      const names = of.map((t) => new Map(t.map((a) => [a.chainId, a.ds.name])));
      for (const r of await this.w.all(`${parts.join(' UNION ALL ')} ORDER BY g, chain_id, id`, params))
        ids.get(`${r.chain_id}/${names[Number(r.g)]!.get(Number(r.chain_id))}`)!.push(String(r.id));
    }
    return ids;
  }

  /** The checkpoints of a backfill's shards, by shard number. */
  async shards(chainId: number, dataset: string): Promise<ShardCheckpoint[]> {
    const sql =
      'SELECT shard, shards, cursor FROM _pool_export.shard_checkpoints WHERE chain_id = $1 AND dataset = $2 ORDER BY shard';
    const rows = await this.w.all(sql, [chainId, dataset]);
    return rows.map((r) => ({ shard: Number(r.shard), shards: Number(r.shards), cursor: String(r.cursor) }));
  }
}
