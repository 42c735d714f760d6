/**
 * What a run knows of each task before it starts: the task's last complete read, and the first page request of those
 * that continue one, which a run asks in one batch per route (`first-pages.ts`).
 */
import type { CheckpointStore } from '../store/checkpoint-store.ts';
import type { FirstAsk } from './first-batch.ts';
import { firstRequest, windowPresenceFrom } from './paginate/first-request.ts';
import { headKey, taskKey } from './routing/reorg-check.ts';
import type { Probed } from './routing/route-choice.ts';
import type { TaskRoute } from './routing/run-routes.ts';
import type { Completed, RunArgs } from './run-args.ts';
import type { Task } from './task.ts';
import type { Cursor } from './task-run.ts';

/**
 * The head of a task's route now (`number:hash`, undefined where the route gives no hash), and the task's last complete
 * read, if any (the list, which has no block, has none).
 */
export function lastRead(
  task: Task,
  probe: Exclude<Probed, Error>,
  completed: Completed,
): { head: string | undefined; complete: { readonly cursor: string; readonly head: string } | undefined } {
  const head = headKey(probe.info.head);
  const complete = task.ds.kind === 'list' || !head ? undefined : completed.get(`${task.chainId}/${task.ds.name}`);
  return { head, complete };
}

/**
 * The first page request of every task that continues a complete read on a route whose head moved, as its paginator
 * will send it: a run asks them in one batch per route (see `first-pages.ts`).
 */
export async function firstAsks(
  args: Pick<RunArgs, 'tasks' | 'config' | 'runId'>,
  run: {
    readonly pinned: ReadonlyMap<Task, TaskRoute>;
    readonly completed: Completed;
    readonly checkpoints: CheckpointStore;
    /** The tasks whose last read stands (`routing/reorg-check.ts`). */
    readonly settled: ReadonlySet<string>;
  },
): Promise<Map<Task, FirstAsk>> {
  const { pinned, completed, checkpoints } = run;
  const planned: { task: Task; ask: FirstAsk; from: number | undefined }[] = [];
  for (const task of args.tasks) {
    const at = pinned.get(task);
    const probe = at?.probe;
    if (!at || !probe || probe instanceof Error) continue;
    const root = probe.info.roots.get(task.ds.entity);
    const { head, complete } = lastRead(task, probe, completed);
    if (root === undefined || !complete || complete.head === head) continue;
    const cursor = JSON.parse(complete.cursor) as Cursor;
    const where = {
      block: probe.block,
      changeBlock: probe.info.changeBlock,
      windowSecs: args.config.reorgWindowSecs,
      settled: run.settled.has(taskKey(task)),
    };
    const request = firstRequest(task.ds, cursor, where);
    if (!request) continue;
    // A mutable dataset's question of which rows of its window are still upstream goes in the batch too, up to a page.
    const from = windowPresenceFrom(task.ds, cursor, where);
    planned.push({ task, ask: { endpoint: at.endpoint, ds: task.ds, root, request }, from });
  }
  // The rows of every window, read for all tasks at once.
  const windows = await checkpoints.idsReadSinceAll(
    planned.flatMap(({ task, from }) => (from === undefined ? [] : [{ chainId: task.chainId, ds: task.ds, from }])),
    args.runId,
  );
  const asks = new Map<Task, FirstAsk>();
  for (const { task, ask, from } of planned) {
    const ids = from === undefined ? [] : windows.get(`${task.chainId}/${task.ds.name}`)!;
    // None at all is an answer too: the task then asks nothing of its window.
    asks.set(task, { ...ask, ...(ids.length <= args.config.pageSize ? { present: ids } : {}) });
  }
  return asks;
}
