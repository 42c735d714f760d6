/**
 * A deployment that keeps little history (its manifest's `indexerHints: prune`: graph-node keeps 500 blocks for
 * `auto`, or the number given) prunes the block a task is pinned to once its head has moved on that far; a query there
 * gets `only has data starting at block number N …` (`upstream-error.ts`, `prunedFloor`). That is not a failure of
 * the task: its floor moved. The task asks the route's head again and goes on from its last commit at the new head,
 * as a run after it would: a full pass ends at the block it began at and reads what changed since then
 * (`paginate/mutable.ts`, `paginate/aggregation.ts`), a sharded backfill reads the rows past its range
 * (`paginate/events.ts`), so what it read at earlier blocks is brought up to the new one in the same run.
 */
import { chainName } from '../config/chains.ts';
import { TaskError } from '../errors.ts';
import { endpointInfo, PROBE_QUERY, type ProbeAnswer } from '../upstream/endpoint-probe.ts';
import { prunedFloor } from '../upstream/upstream-error.ts';
import { runTask } from './by-kind.ts';
import type { PageSource, TaskDeps } from './seams.ts';
import { pinnedAt, type Task, type TaskPin, type TaskStats } from './task.ts';
import type { TaskRun } from './task-run.ts';

/**
 * New heads a task takes in a row, none of whose reads committed a row, after its block was pruned, before it gives up:
 * a deployment that prunes faster than a page can be read. A move after a committed batch starts the count again.
 */
export const MAX_FLOOR_MOVES = 8;

/** New heads one task takes at most, however it goes on. */
const MAX_MOVES_IN_ALL = 10_000;

/** Adds what a failed attempt read to the stats of the attempts after it. */
function addStats(into: TaskStats, from: TaskStats): void {
  for (const k of ['pages', 'rows', 'requests', 'retries', 'bytes', 'duplicates'] as const) into[k] += from[k];
  if (from.rewriteFrom !== undefined)
    into.rewriteFrom = Math.min(into.rewriteFrom ?? Number.POSITIVE_INFINITY, from.rewriteFrom);
  if (from.failovers?.length) into.failovers = [...from.failovers, ...(into.failovers ?? [])];
}

/** The pin of a task at the route's head now: the same root field, which the deployment must still serve. */
async function repin(
  task: Task,
  source: PageSource,
  at: { readonly pin: TaskPin; readonly floor: number; readonly confirmations: number },
): Promise<TaskPin> {
  const { pin, floor, confirmations } = at;
  const info = endpointInfo((await source.request<ProbeAnswer>(task.endpoint, PROBE_QUERY, {})).data);
  const root = info.roots.get(task.ds.entity);
  if (root !== pin.root)
    throw new Error(`the deployment at ${task.endpoint.label} no longer serves ${task.ds.entity} as ${pin.root}`);
  const { number, hash } = info.head;
  // A task reads at most FLOOR_SHARE (`task.ts`) of the history below the head (`routed-source.ts`, `aboveFloor`):
  // confirmations must leave it room. Where the history is not known, the floor is graph-node's own.
  const history = pin.history ?? Number.POSITIVE_INFINITY;
  if (pin.history === undefined ? number - confirmations < floor : confirmations >= history / 2)
    throw new Error(
      `the deployment at ${task.endpoint.label} keeps ${Number.isFinite(history) ? `${history} blocks` : `blocks from ${floor} on`} only, too few for confirmations ${confirmations} below its head ${number}: lower confirmations below half the history it keeps`,
    );
  return {
    ...pin,
    block: pinnedAt(info.head, confirmations, Math.floor(Date.now() / 1000)),
    head: { number, hash },
    changeBlock: info.changeBlock,
    settled: false,
    moved: true,
  };
}

/**
 * Runs a task from its checkpoint (`runTask`), and again at the route's new head each time the deployment pruned the
 * block it read at, while its reads go on (MAX_FLOOR_MOVES). Returns the last attempt's run, with the stats of every attempt,
 * the checkpoint the first started from, and the pin the task ended at.
 */
export async function runTaskAboveFloor(
  task: Task,
  deps: TaskDeps,
  first: TaskPin,
): Promise<{ run: TaskRun; before: string | null; pin: TaskPin }> {
  let pin = first;
  let before: string | null | undefined;
  const read: TaskStats[] = [];
  for (let moves = 0, idle = 0; ; moves++) {
    try {
      const r = await runTask(task, deps, pin);
      for (const s of read) addStats(r.run.stats, s);
      return { run: r.run, before: before === undefined ? r.before : before, pin };
    } catch (e) {
      const floor = prunedFloor(e);
      // A read that committed rows before its block was pruned went on: the count of idle moves starts again.
      if (e instanceof TaskError) idle = (e.progress.stats as TaskStats).rows > 0 ? 0 : idle + 1;
      if (!(e instanceof TaskError) || floor === undefined || idle > MAX_FLOOR_MOVES || moves >= MAX_MOVES_IN_ALL) {
        if (!(e instanceof TaskError) || !read.length) throw e;
        for (const s of read) addStats(e.progress.stats as TaskStats, s);
        throw new TaskError(e.cause, { stats: e.progress.stats, cursorBefore: before ?? e.progress.cursorBefore });
      }
      if (before === undefined) before = e.progress.cursorBefore;
      read.push(e.progress.stats as TaskStats);
      const next = await repin(task, deps.source, { pin, floor, confirmations: deps.config.confirmations });
      deps.log(
        'pin-moved',
        {
          dataset: task.ds.name,
          chain: chainName(task.chainId),
          chainId: task.chainId,
          from: pin.block.number,
          to: next.block.number,
          floor,
          move: moves + 1,
        },
        'warn',
      );
      pin = next;
    }
  }
}
