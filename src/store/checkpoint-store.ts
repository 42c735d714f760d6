/** Checkpoints: where each (chain, dataset) task stands. Written only inside the transaction that commits its rows. */
import type { Warehouse } from './warehouse.ts';

/** A second writer moved the checkpoint under us: stop rather than duplicate or lose rows. */
export class ConcurrentWriterError extends Error {
  constructor(dataset: string, chainId: number) {
    super(`the checkpoint of ${dataset} on chain ${chainId} was changed by another process during this run; make sure only one pool-export run uses this data folder`);
    this.name = 'ConcurrentWriterError';
  }
}

/** A committed checkpoint. */
export interface Checkpoint {
  readonly cursor: string;
  readonly block: number | null;
}

/** The statements of a compare-and-set move from `prev` to `next`. */
export function checkpointStatements(
  chainId: number, dataset: string, prev: string | null, next: string, block: { number: number | null; time: string | null }, runId: string,
): { sql: string; params: (string | number | null)[] } {
  if (prev === null) {
    return {
      sql: 'INSERT INTO _pool_export.checkpoints (chain_id, dataset, cursor, block, run_id, block_time) VALUES ($1, $2, $3, $4, $5, $6::TIMESTAMPTZ)',
      params: [chainId, dataset, next, block.number, runId, block.time],
    };
  }
  return {
    sql: 'UPDATE _pool_export.checkpoints SET cursor = $3, block = $4, run_id = $5, block_time = $7::TIMESTAMPTZ, updated_at = now() WHERE chain_id = $1 AND dataset = $2 AND cursor = $6',
    params: [chainId, dataset, next, block.number, runId, prev, block.time],
  };
}

/** Reads checkpoints. */
export class CheckpointStore {
  constructor(private readonly w: Warehouse) {}

  /** The committed checkpoint of a task, if any. */
  async get(chainId: number, dataset: string): Promise<Checkpoint | undefined> {
    const rows = await this.w.all('SELECT cursor, block FROM _pool_export.checkpoints WHERE chain_id = $1 AND dataset = $2', [chainId, dataset]);
    const r = rows[0];
    return r ? { cursor: String(r.cursor), block: r.block === null ? null : Number(r.block) } : undefined;
  }

  /** The checkpoints of a backfill's shards (`<dataset>#<k>/<n>`), by name. */
  async shards(chainId: number, dataset: string): Promise<Map<string, string>> {
    const rows = await this.w.all('SELECT dataset, cursor FROM _pool_export.checkpoints WHERE chain_id = $1 AND starts_with(dataset, $2) ORDER BY dataset', [chainId, `${dataset}#`]);
    return new Map(rows.map((r) => [String(r.dataset), String(r.cursor)]));
  }
}
