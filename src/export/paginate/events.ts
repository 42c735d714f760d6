/**
 * Events (swaps, orders, liquidity histories…) and buckets (day and hour data): keyset pages on (timestamp or date or
 * hour, id). The first backfill may be sharded; later runs re-read a window before the checkpoint so that reorganized
 * rows are replaced (buckets: the open bucket too), or, where the last read stands, go on from the checkpoint.
 */

import { firstId } from '../queries.ts';
import type { Cursor, TaskRun } from '../task-run.ts';
import { pageKeyset } from './keyset.ts';
import { backfillSharded } from './sharded-backfill.ts';
import { seqFrom } from './window.ts';

/** Pages an event or bucket dataset from its checkpoint to the pinned block. */
export async function pageEvents(run: TaskRun, cursor: Cursor): Promise<void> {
  const { task, deps } = run;
  if (
    cursor.seq === undefined &&
    (await backfillSharded(run, await deps.checkpoints.shards(task.chainId, task.ds.name)))
  )
    return;
  const w = { windowSecs: deps.config.reorgWindowSecs, settled: run.pin.settled };
  const from = cursor.seq === undefined ? 0 : seqFrom(cursor.seq, w);
  await pageKeyset(run, from, (last) =>
    last ? { seq: String(last[task.ds.seq!]), id: last.id } : { seq: String(from), id: firstId(task.ds) },
  );
}
