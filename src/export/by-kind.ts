/** Runs one task: pages a dataset from its checkpoint to the pinned block with the paginator of its kind. */
import type { CursorKind } from '../catalog/catalog.ts';
import { TaskError } from '../errors.ts';
import { pageAggregation } from './paginate/aggregation.ts';
import { pageEvents } from './paginate/events.ts';
import { pageList } from './paginate/list.ts';
import { pageMutable } from './paginate/mutable.ts';
import { pageSnapshot } from './paginate/snapshot.ts';
import type { TaskDeps } from './seams.ts';
import type { Task, TaskPin, TaskStats } from './task.ts';
import { type Cursor, TaskRun } from './task-run.ts';

/** Pages a dataset of one kind from the cursor of its checkpoint (empty for a new one). */
export type Paginator = (run: TaskRun, cursor: Cursor) => Promise<void>;

/** The paginator of each kind of dataset (the cursor rules of the design). */
export const PAGINATORS: Readonly<Record<CursorKind, Paginator>> = {
  event: pageEvents,
  bucket: pageEvents,
  // An aggregation is mutable in the store, but paged newest first.
  mutable: (run, cursor) => (run.ds.aggregation ? pageAggregation(run, cursor) : pageMutable(run, cursor)),
  snapshot: pageSnapshot,
  list: pageList,
};

/**
 * Runs a task from its checkpoint; returns the run with its stats and final cursor, and the checkpoint it started
 * from. A failure is a TaskError that carries the same.
 */
export async function runTask(
  task: Task,
  deps: TaskDeps,
  pin: TaskPin,
): Promise<{ run: TaskRun; before: string | null }> {
  const before = (await deps.checkpoints.get(task.chainId, task.ds.name))?.cursor ?? null;
  const run = new TaskRun({ task, deps, pin }, before);
  try {
    await PAGINATORS[task.ds.kind](run, before ? (JSON.parse(before) as Cursor) : {});
  } catch (e) {
    run.discard();
    throw new TaskError<TaskStats>(e, { stats: run.stats, cursorBefore: before });
  }
  return { run, before };
}
