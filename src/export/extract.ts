/** The extract stage of a run: every task of the plan on its route, each committing its own batches, and the ledger. */

import pLimit from 'p-limit';
import { CheckpointStore } from '../store/checkpoint-store.ts';
import { pruneLedger, RunLedger } from '../store/run-ledger.ts';
import { DuckDBSink, GROUP_LIMIT } from '../store/sink.ts';
import { commitLanes } from '../store/sink-lanes.ts';
import { StatusKeeper } from '../store/status-file.ts';
import { prepareTables } from '../store/tables.ts';
import type { EndpointInfo } from '../upstream/endpoint-probe.ts';
import { WorkerPageChecker } from './check/page-check-runner.ts';
import { commitOrder } from './commit-order.ts';
import { firstAsks } from './first-asks.ts';
import type { FirstAsk } from './first-batch.ts';
import { FirstPages } from './first-pages.ts';
import { HostLimited } from './host-limited.ts';
import { settledTasks } from './routing/reorg-check.ts';
import { RouteHealth } from './routing/route-health.ts';
import { chooseRoutes, probeRoutes } from './routing/run-routes.ts';
import type { ExportOutcome, RunArgs } from './run-args.ts';
import { runOne } from './run-task.ts';
import type { PageSource } from './seams.ts';
import { isStopped, ledgerTask, type Task, type TaskResult } from './task.ts';

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
