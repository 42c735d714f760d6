/**
 * One task of a run on its route: skipped where its route failed or lacks its entity, or where nothing can be new;
 * otherwise read from its checkpoint (on at a newer block where the deployment prunes its own), its result named.
 */

import { historyOf, subgraphOf } from '../catalog/subgraphs.ts';
import { chainName } from '../config/chains.ts';
import { errorClass, explainWriteError, TaskError, UpstreamError } from '../errors.ts';
import { redact } from '../upstream/upstream-error.ts';
import { lastRead } from './first-asks.ts';
import { runTaskAboveFloor } from './moved-floor.ts';
import { headKey, taskKey } from './routing/reorg-check.ts';
import { NoRouteError, type TaskRoute } from './routing/run-routes.ts';
import type { RunPlumbing } from './run-args.ts';
import { emptyStats, type Task, type TaskPin, type TaskResult, type TaskStats } from './task.ts';

/** Runs one task and turns any failure into a failed result naming the task. */
export async function runOne(run: RunPlumbing, planned: Task, at: TaskRoute): Promise<TaskResult> {
  const { args } = run;
  const result = await runRouted(run, { ...planned, endpoint: at.endpoint }, at);
  const failovers = (result.stats.failovers ?? []).map((f) => ({
    ...f,
    reason: redact(f.reason, args.config.secrets),
    ...(f.refused ? { refused: redact(f.refused, args.config.secrets) } : {}),
  }));
  const moved = failovers.filter((f) => !f.refused).at(-1);
  const route = moved?.to ?? at.route;
  const { failovers: _, ...stats } = result.stats;
  return {
    ...result,
    task: planned,
    stats,
    ...(route ? { route } : {}),
    ...(at.views ? { routes: at.views } : {}),
    ...(failovers.length ? { failovers } : {}),
  };
}

/** Runs one task on its route and turns any failure into a failed result naming the task. */
async function runRouted(plumbing: RunPlumbing, task: Task, at: TaskRoute): Promise<TaskResult> {
  const { args, sink, source, checkpoints, checker, complete: completed, health, unready } = plumbing;
  const probe = unready.get(task.ds) ?? at.probe;
  const startedAt = new Date();
  const label = { dataset: task.ds.name, chain: chainName(task.chainId), chainId: task.chainId };
  const empty = emptyStats();
  if (probe instanceof Error) {
    // An unreachable host says so in the same words for all of its tasks (the summary then gives them one line).
    const why = unready.has(task.ds)
      ? `its table could not be readied, so it was not read (the run's other datasets were): ${probe.message.split('\n')[0]}`
      : (probe instanceof UpstreamError && probe.kind === 'unreachable') || probe instanceof NoRouteError
        ? probe.message
        : `the block lookup failed: ${probe.message}`;
    const message = redact(`${task.ds.name} on ${label.chain}: ${why}`, args.config.secrets);
    args.log('task-failed', { ...label, errorClass: errorClass(probe), error: message }, 'error');
    return {
      task,
      status: 'failed',
      stats: empty,
      block: null,
      cursorBefore: null,
      cursorAfter: null,
      startedAt,
      endedAt: new Date(),
      error: { cls: errorClass(probe), message },
    };
  }
  const block = probe.block;
  const root = task.ds.kind === 'list' ? 'liquidity_list' : probe.info.roots.get(task.ds.entity);
  if (root === undefined) {
    // An older deployment lacks the entity: skipped there, neither a failure nor a success.
    // A subgraph's deployment served it when added or refreshed (those it did not are not read at all): a new version.
    const why = subgraphOf(task.ds.schema)
      ? `it served it when the subgraph was added or refreshed: pool-export subgraph refresh ${task.ds.schema} takes it as it is now`
      : 'older deployments lack some';
    const message = `${task.ds.name} on ${label.chain}: unavailable: the ${task.ds.schema} deployment at ${task.endpoint.label} has no ${task.ds.entity} entity (${why}); skipped there`;
    args.log(
      'task-unavailable',
      {
        ...label,
        entity: task.ds.entity,
        deployment: probe.info.deployment,
        message: redact(message, args.config.secrets),
      },
      'warn',
    );
    return {
      task,
      status: 'unavailable',
      stats: empty,
      block: block.number,
      cursorBefore: null,
      cursorAfter: null,
      startedAt,
      endedAt: new Date(),
      error: { cls: 'unavailable', message: redact(message, args.config.secrets) },
    };
  }
  // Nothing can be new where the route's head is the one the task's last complete read saw, number and hash (a reorg
  // to the same height changes the hash): no request is made. The list has no block.
  const { number, hash } = probe.info.head;
  const { head, complete } = lastRead(task, probe, completed);
  if (complete && complete.head === head) {
    args.log('task-unchanged', { ...label, block: block.number });
    return {
      task,
      status: 'ok',
      stats: empty,
      block: block.number,
      cursorBefore: complete.cursor,
      cursorAfter: complete.cursor,
      startedAt,
      endedAt: new Date(),
      unchanged: true,
      head,
    };
  }
  const standby = task.ds.kind === 'list' ? [] : (at.standby ?? []);
  const history = historyOf(task.ds.schema, task.chainId);
  const pin: TaskPin = {
    block,
    root,
    changeBlock: probe.info.changeBlock,
    ...(plumbing.settled.has(taskKey(task)) ? { settled: true } : {}),
    ...(history !== undefined ? { history } : {}),
    head: { number, hash },
    ...(standby.length ? { standby } : {}),
  };
  args.log('task-start', { ...label, block: block.number });
  const deps = {
    config: args.config,
    source,
    checker,
    sink,
    checkpoints,
    runId: args.runId,
    signal: args.signal,
    log: args.log,
    routes: health,
    ...(args.progress ? { onPage: args.progress.page.bind(args.progress) } : {}),
  };
  let result: TaskResult;
  let run: Awaited<ReturnType<typeof runTaskAboveFloor>>['run'] | undefined;
  let before: string | null = null;
  try {
    // A deployment that prunes its history may drop the pinned block while the task reads: it goes on at a new head.
    const r = await runTaskAboveFloor(task, deps, pin);
    run = r.run;
    before = r.before;
    const seen = r.pin === pin ? head : r.pin.head && headKey(r.pin.head);
    result = {
      task,
      status: 'ok',
      stats: run.stats,
      block: r.pin.block.number,
      cursorBefore: before,
      cursorAfter: run.cursor,
      startedAt,
      endedAt: new Date(),
      // A task that moved to another route read at that route's block: the head it saw here says nothing of it.
      ...(seen && !(run.stats.failovers ?? []).some((f) => !f.refused) ? { head: seen } : {}),
    };
    args.log('task-done', {
      ...label,
      rows: run.stats.rows,
      pages: run.stats.pages,
      requests: run.stats.requests,
      retries: run.stats.retries,
      duplicates: run.stats.duplicates,
    });
  } catch (e) {
    const message = redact(
      `${task.ds.name} on ${label.chain}: ${explainWriteError(args.config, e)}`,
      args.config.secrets,
    );
    const stats = e instanceof TaskError ? (e.progress.stats as TaskStats) : empty;
    if (e instanceof TaskError) before = e.progress.cursorBefore;
    result = {
      task,
      status: 'failed',
      stats,
      block: block.number,
      cursorBefore: before,
      cursorAfter: null,
      startedAt,
      endedAt: new Date(),
      error: { cls: errorClass(e), message },
    };
    args.log('task-failed', { ...label, errorClass: errorClass(e), error: message }, 'error');
  }
  return result;
}
