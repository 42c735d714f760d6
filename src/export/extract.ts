/** The extract stage of a run: every task of the plan on its route, each committing its own batches, and the ledger. */

import pLimit from 'p-limit';
import type { Dataset } from '../catalog/catalog.ts';
import { historyOf, subgraphOf } from '../catalog/subgraphs.ts';
import { chainName } from '../config/chains.ts';
import type { Config } from '../config/config.ts';
import { errorClass, explainWriteError, TaskError, UpstreamError } from '../errors.ts';
import { CheckpointStore } from '../store/checkpoint-store.ts';
import { pruneLedger, RunLedger } from '../store/run-ledger.ts';
import { commitLanes, DuckDBSink, GROUP_LIMIT } from '../store/sink.ts';
import { StatusKeeper } from '../store/status-file.ts';
import { prepareTables } from '../store/tables.ts';
import type { Warehouse } from '../store/warehouse.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import type { EndpointInfo } from '../upstream/endpoint-probe.ts';
import { redact } from '../upstream/upstream-error.ts';
import type { EventLog } from '../util/logger.ts';
import { type PageChecker, WorkerPageChecker } from './check/page-check-runner.ts';
import { commitOrder } from './commit-order.ts';
import { type Completed, firstAsks, lastRead } from './first-asks.ts';
import { type FirstAsk, FirstPages, HostLimited } from './first-pages.ts';
import { runTaskAboveFloor } from './moved-floor.ts';
import { settledTasks, taskKey } from './routing/reorg-check.ts';
import { RouteHealth } from './routing/route-health.ts';
import { chooseRoutes, NoRouteError, probeRoutes, type TaskRoute } from './routing/run-routes.ts';
import type { PageSource } from './seams.ts';
import { emptyStats, isStopped, ledgerTask, type Task, type TaskPin, type TaskResult, type TaskStats } from './task.ts';

/** Inputs of a run, passed explicitly. */
export interface RunArgs {
  readonly config: Config;
  readonly tasks: readonly Task[];
  readonly jobs: readonly string[];
  readonly warehouse: Warehouse;
  readonly client: UpstreamClient;
  readonly runId: string;
  readonly signal: AbortSignal;
  readonly log: EventLog;
  readonly progress?: ProgressSink;
}

/** What the tasks of a run did, and what the run's probe of each route found (the routes that answered), by URL. */
export interface ExportOutcome {
  readonly results: TaskResult[];
  readonly probed: ReadonlyMap<string, EndpointInfo>;
}

/** Receives progress of tasks (progress bars on a terminal). */
export interface ProgressSink {
  start(total: number): void;
  page(task: Task, stats: TaskStats, fraction: number | undefined): void;
  done(result: TaskResult): void;
  stop(): void;
}

/** What every task of a run shares: the run's arguments, the sink, the checkpoint store and the page checker. */
interface RunPlumbing {
  readonly args: RunArgs;
  readonly sink: DuckDBSink;
  /** The upstream, with the first pages a batch read already (see `first-pages.ts`). */
  readonly source: PageSource;
  readonly checkpoints: CheckpointStore;
  readonly checker: PageChecker;
  /** The tasks whose last read ended well, as the run found them (see `CheckpointStore.complete`). */
  readonly complete: Completed;
  /** The tasks whose last read stands (`routing/reorg-check.ts`): they read only what is new. */
  readonly settled: ReadonlySet<string>;
  /** The routes the run gave up on. */
  readonly health: RouteHealth;
  /** The datasets whose table could not be readied, and why: their tasks fail at once, the others run. */
  readonly unready: ReadonlyMap<Dataset, Error>;
}

/** Runs one task and turns any failure into a failed result naming the task. */
async function runOne(run: RunPlumbing, planned: Task, at: TaskRoute): Promise<TaskResult> {
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
    const seen = r.pin === pin ? head : r.pin.head?.hash ? `${r.pin.head.number}:${r.pin.head.hash}` : undefined;
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

/** Runs every task of the plan; each task commits its own batches, so a failure never undoes another task's work. */
export async function runExport(args: RunArgs): Promise<ExportOutcome> {
  // 1. Tables for every dataset of the plan: one that cannot be readied fails its tasks alone.
  const unready = await prepareTables(args.warehouse, [...new Set(args.tasks.map((t) => t.ds))]);
  // 2. The run enters the ledger, and the status file (which `status` reads while the warehouse is held) is renewed.
  const ledger = new RunLedger(args.warehouse);
  await ledger.start(args.runId, args.jobs);
  const status = await StatusKeeper.start(args.warehouse, args.config.dataDir, args.runId);
  // 3. One probe per route pins every page of its tasks to a block and names the root fields there; each task takes
  //    its route (with several: the first healthy one on the main fork, within maxLagBlocks of the freshest).
  const probes = await probeRoutes(args);
  const pinned = await chooseRoutes(args, probes);
  // 4. What is new: the first page of every task that continues a complete read, one batched request per route. Then
  //    tasks run concurrently, at most `perEndpointConcurrency` per upstream host.
  const sink = new DuckDBSink(args.warehouse, args.config.dataDir, {
    signal: args.signal,
    lanes: commitLanes(args.config.duckdbMemoryLimit),
  });
  const checkpoints = new CheckpointStore(args.warehouse);
  const complete = await checkpoints.complete();
  // What earlier runs read and still stands, found by walking each chain down from its head (one small request a
  // block): those tasks read only what is new.
  const settled = await settledTasks({ ...args, pinned, complete, source: args.client });
  await checkpoints.preload();
  const source = new FirstPages(args.client, {
    pageSize: args.config.pageSize,
    maxAliases: args.config.batchDatasets,
  });
  const asks =
    args.config.batchDatasets > 0
      ? await firstAsks(args, { pinned, completed: complete, checkpoints, settled })
      : new Map<Task, FirstAsk>();
  await source.read([...asks.values()], {
    concurrency: args.config.concurrency,
    log: args.log,
    signal: args.signal,
  });
  const checker = new WorkerPageChecker();
  const given = new RouteHealth();
  const limit = pLimit(args.config.concurrency);
  const hosts = new Map<string, ReturnType<typeof pLimit>>();
  const hostLimit = (h: string) => hosts.get(h) ?? hosts.set(h, pLimit(args.config.perEndpointConcurrency)).get(h)!;
  // A task whose whole first page a batch holds asks the upstream nothing (what remains is its commit): such tasks run
  // up to two commit groups at a time, so that their commits share transactions, rather than `concurrency` at a time:
  // one group commits while the next one's tasks map their rows. With one group at a time, each full group's commit
  // was followed by one of the 3-4 batches that came in meanwhile (18 commits after 100 new blocks on the demo's 8
  // chains, where 10 now do). Should one still ask something, its request waits for a place among its host's
  // (`perEndpointConcurrency`).
  const light = pLimit(2 * GROUP_LIMIT);
  const short = (t: Task) => {
    const ask = asks.get(t);
    return ask !== undefined && source.holdsShort(ask);
  };
  const slot = (t: Task) => {
    if (short(t))
      return <T>(fn: (s: PageSource) => Promise<T>) =>
        light(() => fn(new HostLimited(source, hostLimit(t.endpoint.host))));
    return <T>(fn: (s: PageSource) => Promise<T>) => limit(() => hostLimit(t.endpoint.host)(() => fn(source)));
  };
  args.progress?.start(args.tasks.length);
  let results: TaskResult[];
  try {
    // Tasks queue in commit order (see `commitOrder`); their results keep the plan's order.
    const started: Promise<TaskResult | undefined>[] = [];
    for (const i of commitOrder(args.tasks, short))
      started[i] = slot(args.tasks[i]!)(async (src) => {
        const t = args.tasks[i]!;
        // After a stop request, the tasks not started yet are left out: not run, not in the ledger.
        if (args.signal.aborted) return undefined;
        const plumbing = { args, sink, source: src, checkpoints, checker, complete, settled, health: given, unready };
        const r = await runOne(plumbing, t, pinned.get(t)!);
        args.progress?.done(r);
        // A task stopped on request is no failure: the status file says so, with no error.
        const stopped = isStopped(r);
        await status.taskEnded({
          dataset: t.ds.name,
          chainId: t.chainId,
          status: stopped ? 'stopped' : r.status,
          error: stopped ? null : (r.error?.message ?? null),
          endedAt: r.endedAt,
          ...(r.unchanged ? { unchanged: true } : {}),
        });
        return r;
      });
    const ended = await Promise.all(started);
    results = ended.filter((r) => r !== undefined);
  } finally {
    await checker.close();
    await sink.close();
  }
  args.progress?.stop();
  // 5. Each task and the run close in the ledger.
  const records = results.map(ledgerTask);
  await ledger.tasks(args.runId, records);
  await ledger.finish(args.runId, records, args.signal.aborted);
  // The ledger keeps the last `keepRuns` runs; a failure to prune it is no failure of the run (the next one prunes).
  try {
    const tasks = await pruneLedger(args.warehouse, args.config.keepRuns);
    if (tasks > 0) args.log('ledger-pruned', { runId: args.runId, keepRuns: args.config.keepRuns, tasks });
  } catch (e) {
    args.log('ledger-prune-failed', { runId: args.runId, error: (e as Error).message }, 'warn');
  }
  await status.end();
  const probed = new Map<string, EndpointInfo>();
  for (const [url, p] of probes) if (!(p instanceof Error)) probed.set(url, p.info);
  return { results, probed };
}
