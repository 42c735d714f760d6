/** Passes by `id_gt`: every row (snapshots, a mutable entity's full pass), the rows changed since a block, or those
 * whose keyset field is null. */
import type { Replace } from '../../store/batch.ts';
import type { Cursor, TaskRun } from '../task-run.ts';
import { runPass } from './pass.ts';

/** What a pass by `id_gt` pages through: every row, the rows changed since a block, or those with a null keyset field. */
export type IdPass =
  | { readonly shape: 'id' }
  | { readonly shape: 'null-id' }
  | { readonly shape: 'changed-since'; readonly since: number };

/** A pass by id: where it starts, what it replaces, and the checkpoints it commits. */
export interface IdPassPlan {
  readonly pass: IdPass;
  /** The id after which the pass starts ('' for the first). */
  readonly startId: string;
  readonly replace: Replace;
  /** The checkpoint after the last page. */
  readonly finish: Cursor;
  /** The checkpoint of each full batch before the last; without it, the rows are committed only at the end. */
  readonly progress?: (lastId: string) => Cursor;
}

/** Pages one pass by `id_gt` to its end. A cursor that carries its own block keeps it. */
export async function pageById(run: TaskRun, plan: IdPassPlan): Promise<void> {
  const block = run.block.number;
  const extra = plan.pass.shape === 'changed-since' ? { since: plan.pass.since } : {};
  const { progress } = plan;
  await runPass(run, {
    first: { shape: plan.pass.shape, vars: { block, id: plan.startId, ...extra } },
    next: (last) => ({ shape: plan.pass.shape, vars: { block, id: last.id, ...extra } }),
    replace: { first: plan.replace, later: plan.replace },
    // Without checkpoints along the way, the rows are committed only at the end.
    batchRows: progress ? run.deps.config.batchRows : Number.POSITIVE_INFINITY,
    cursor: (last, done) => ({
      block,
      ...(done || !progress ? plan.finish : progress(last?.id ?? plan.startId)),
    }),
  });
}
