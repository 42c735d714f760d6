/** The order in which a run's tasks queue, so that commit groups hold one dataset's batches of several chains. */
import type { Task } from './task.ts';

/**
 * The order in which tasks queue (their indexes in `tasks`): the plan's, but for the tasks that only commit a first page
 * a batch holds whole (`short`), which queue dataset by dataset across chains. Those run a commit group at a time, so a
 * group then holds one dataset's batches of several chains, which the sink compares with the stored rows and writes in
 * one set of statements (`store/compared-batches.ts`) rather than one set per chain.
 */
export function commitOrder(tasks: readonly Task[], short: (t: Task) => boolean): number[] {
  const key = (i: number) => {
    const t = tasks[i]!;
    return short(t) ? `0 ${t.ds.name} ${String(t.chainId).padStart(12, '0')}` : '1';
  };
  const keys = tasks.map((_, i) => key(i));
  return tasks.map((_, i) => i).sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : a - b));
}
