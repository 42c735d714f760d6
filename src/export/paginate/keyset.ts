/**
 * Keyset pages on (seq, id): `seq_gt`, or `seq` equal and `id_gt`, never `skip`. Events and buckets page this way,
 * and mutable entities on endpoints without `_change_block` (by `updatedAt`).
 */
import type { Replace } from '../../store/batch.ts';
import type { PageShape } from '../queries.ts';
import { type Cursor, keyValue, type Row, type TaskRun } from '../task-run.ts';

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
  let shape: PageShape = 'seq-first';
  let vars: Record<string, unknown> = { block: run.block.number, from: keyValue(ds, from) };
  let replace: Replace = mutable ? { kind: 'ids' } : { kind: 'from', column: run.seqColumn, from };
  run.from = from;
  if (!mutable) run.stats.rewriteFrom = from;
  let last: Row | undefined;
  await run.paging(async () => {
    for (;;) {
      const page = await run.page(shape, vars);
      const done = page.done;
      last = page.last ?? last;
      if (done || run.buffered >= run.deps.config.batchRows) {
        await run.commitBatch({ next: { block: run.block.number, ...cursorAfter(last, done) }, replace }, done);
        replace = mutable ? { kind: 'ids' } : { kind: 'none' };
      }
      if (done) return;
      shape = 'seq-next';
      vars = { block: run.block.number, seq: keyValue(ds, String(last![ds.seq!])), id: last!.id };
    }
  });
}
