/**
 * Keyset pages on (seq, id): `seq_gt`, or `seq` equal and `id_gt`, never `skip`. Events and buckets page this way,
 * and mutable entities on endpoints without `_change_block` (by `updatedAt`).
 */
import type { Row } from '../routing/routed-source.ts';
import { type Cursor, keyValue, type TaskRun } from '../task-run.ts';
import { runPass } from './pass.ts';

/**
 * Pages from `from` (inclusive) to the pinned block; the first batch replaces every stored row from `from` on (mutable
 * entities: the rows with the same ids). `cursorAfter` gives each batch's checkpoint; one that carries its own block
 * keeps it.
 */
export async function pageKeyset(
  run: TaskRun,
  from: number,
  cursorAfter: (last: Row | undefined, done: boolean) => Cursor,
): Promise<void> {
  const ds = run.ds;
  const mutable = ds.kind === 'mutable';
  const block = run.block.number;
  run.measure(from);
  if (!mutable) run.rewritesFrom(from);
  await runPass(run, {
    first: { shape: 'seq-first', vars: { block, from: keyValue(ds, from) } },
    next: (last) => ({ shape: 'seq-next', vars: { block, seq: keyValue(ds, String(last[ds.seq!])), id: last.id } }),
    replace: mutable
      ? { first: { kind: 'ids' }, later: { kind: 'ids' } }
      : { first: { kind: 'from', column: run.seqColumn, from }, later: { kind: 'none' } },
    batchRows: run.deps.config.batchRows,
    cursor: (last, done) => ({ block, ...cursorAfter(last, done) }),
  });
}
