/**
 * The one page loop. A pass describes its requests (the first, and the one after a page) and its cursor (the
 * checkpoint a batch moves to); `runPass` drives every pass the same way: read a page into the buffer, commit a batch
 * when the buffer is full or the pass is done (the last commit awaited, the others left running while the next pages
 * are read), then ask for the next page. Keyset passes (`keyset.ts`), passes by id (`by-id.ts`) and the shards of a
 * first backfill (`sharded-backfill.ts`) are passes.
 */
import type { Replace } from '../../store/batch.ts';
import type { PageShape } from '../queries.ts';
import type { Row } from '../routing/routed-source.ts';
import type { TaskRun } from '../task-run.ts';

/** One request of a pass: the page query's shape and its variables. */
export interface PassRequest {
  readonly shape: PageShape;
  readonly vars: Record<string, unknown>;
}

/** A pass: its requests, what its batches replace, how large they grow, and the checkpoint each moves to. */
export interface Pass {
  readonly first: PassRequest;
  /** The request after a page (not the last) whose last row is `last`. */
  next(last: Row): PassRequest;
  /** What the first batch replaces, and what each later one does. */
  readonly replace: { readonly first: Replace; readonly later: Replace };
  /** Rows a batch holds before it is committed (Infinity: one batch, at the end). */
  readonly batchRows: number;
  /** The checkpoint of a batch, from the last row read so far (none when no row was), and whether the pass is done. */
  cursor(last: Row | undefined, done: boolean): object;
}

/** Runs a pass to its end (see the module's header). */
export async function runPass(run: TaskRun, pass: Pass): Promise<void> {
  let request = pass.first;
  let replace = pass.replace.first;
  let last: Row | undefined;
  await run.paging(async () => {
    for (;;) {
      const page = await run.page(request.shape, request.vars);
      last = page.last ?? last;
      if (page.done || run.buffered >= pass.batchRows) {
        await run.commitBatch({ next: pass.cursor(last, page.done), replace }, page.done);
        replace = pass.replace.later;
      }
      if (page.done) return;
      request = pass.next(last!);
    }
  });
}
