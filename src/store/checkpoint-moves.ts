import { ConcurrentWriterError } from '../errors.ts';
import type { Batch } from './batch.ts';
import { type CheckpointKey, checkpointMovesStatement, checkpointStatement } from './checkpoint-store.ts';
import type { Tx } from './sql-port.ts';

/** The key of a batch's checkpoint. */
export function checkpointKey(b: Batch): CheckpointKey {
  return { chainId: b.chainId, dataset: b.ds.name, ...(b.checkpoint.shard ? { shard: b.checkpoint.shard } : {}) };
}

/** The error of a batch whose checkpoint another writer moved (or created) first. */
export function concurrentWriter(b: Batch): ConcurrentWriterError {
  const shard = b.checkpoint.shard;
  return new ConcurrentWriterError(
    shard ? `${b.ds.name} (shard ${shard.shard} of ${shard.shards})` : b.ds.name,
    b.chainId,
  );
}

/**
 * The checkpoint moves of batches, in order, by compare-and-set, in as few statements as they allow: the moves of one
 * checkpoint that follow each other become one (from the first batch's `prev` to the last's `next`), and the moves of
 * existing checkpoints of one table go in one UPDATE. Any move that fails fails them all; the sink then commits the
 * batches one by one, which finds the one refused.
 */
export async function moveCheckpoints(tx: Tx, batches: readonly Batch[]): Promise<void> {
  const chains = new Map<string, { first: Batch; last: Batch }>();
  for (const b of batches) {
    const id = JSON.stringify([b.chainId, b.ds.name, b.checkpoint.shard?.shard ?? null, b.checkpoint.shard?.shards]);
    const c = chains.get(id);
    if (!c) chains.set(id, { first: b, last: b });
    else if (c.last.checkpoint.next === b.checkpoint.prev) c.last = b;
    else throw concurrentWriter(b);
  }
  const move = (c: { first: Batch; last: Batch }) => ({
    key: checkpointKey(c.first),
    move: {
      prev: c.first.checkpoint.prev,
      next: c.last.checkpoint.next,
      block: { number: c.last.block, time: c.last.blockTime },
      runId: c.last.runId,
    },
  });
  const tables = new Map<boolean, ReturnType<typeof move>[]>();
  for (const c of chains.values()) {
    const m = move(c);
    // A checkpoint not there yet is created by its own statement (an INSERT that adds no row if another writer did).
    if (m.move.prev === null) {
      const cp = checkpointStatement(m.key, m.move);
      if ((await tx.exec(cp.sql, cp.params)) !== 1) throw concurrentWriter(c.first);
    } else tables.set(!!m.key.shard, [...(tables.get(!!m.key.shard) ?? []), m]);
  }
  for (const moves of tables.values()) {
    const cp = checkpointMovesStatement(moves);
    if ((await tx.exec(cp.sql, cp.params)) !== moves.length) throw concurrentWriter(batches[0]!);
  }
}
