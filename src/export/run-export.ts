/** The orchestrator of one run: a flat recipe over the plan's tasks. */
import { explainWriteError, isDiskFull } from '../util/disk-full.ts';
import pLimit from 'p-limit';
import { chainName } from '../config/chains.ts';
import type { Config } from '../config/config.ts';
import { CheckpointStore } from '../store/checkpoint-store.ts';
import { RunLedger } from '../store/run-ledger.ts';
import { DuckDBSink } from '../store/sink.ts';
import type { Warehouse } from '../store/warehouse.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import { withRetries } from '../upstream/retry.ts';
import { redact, UpstreamError } from '../upstream/upstream-error.ts';
import type { EventLog } from '../util/logger.ts';
import { DATASETS } from '../catalog/catalog.ts';
import { endpointFor } from './plan.ts';
import { META_QUERY } from './queries.ts';

/** A dataset of the exchange schema, whose endpoint gives a chain's head for the liquidity list. */
const DODOEX_PROBE = DATASETS.find((d) => d.schema === 'dodoex')!;
import type { PinnedBlock, Task, TaskResult, TaskStats } from './task.ts';
import { runTask, StopRequested, TaskError } from './task-runner.ts';

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

/** Receives progress of tasks (progress bars on a terminal). */
export interface ProgressSink {
  start(total: number): void;
  page(task: Task, stats: TaskStats, fraction: number | undefined): void;
  done(result: TaskResult): void;
  stop(): void;
}

type Meta = { _meta: { block: { number: number; hash: string | null; timestamp: number | null }; hasIndexingErrors: boolean } };

/** One `_meta` lookup per endpoint: the block every page of its tasks is pinned to. */
async function pinBlocks(args: RunArgs): Promise<Map<string, PinnedBlock | Error>> {
  const pinned = new Map<string, PinnedBlock | Error>();
  const now = Math.floor(Date.now() / 1000);
  // The liquidity list has no block: its snapshots are stamped with the head of the same chain's exchange subgraph.
  const lookupFor = (t: Task) => (t.ds.kind === 'list' ? endpointFor(args.config, DODOEX_PROBE, t.chainId) : t.endpoint);
  const endpoints = new Map(args.tasks.map((t) => [lookupFor(t).url, { ...t, endpoint: lookupFor(t) }]));
  const limit = pLimit(args.config.concurrency);
  await Promise.all([...endpoints.values()].map((t) => limit(async () => {
    try {
      const r = await withRetries(() => args.client.request<Meta>(t.endpoint, META_QUERY, {}), { maxAttempts: args.config.maxAttempts });
      const meta = r.data._meta;
      if (meta.hasIndexingErrors) {
        throw new UpstreamError(`the ${t.ds.schema} subgraph of ${chainName(t.chainId)} reports indexing errors, so its data may be incomplete; these datasets are skipped until it recovers`, 'graphql', false);
      }
      const number = Math.max(0, meta.block.number - args.config.confirmations);
      // With confirmations the pinned block is a little older than the head; the head's time is close enough for
      // the mutable watermark, since incremental runs re-read reorgWindowSecs before it anyway.
      pinned.set(t.endpoint.url, { number, timestamp: meta.block.timestamp ?? now });
    } catch (e) {
      pinned.set(t.endpoint.url, e as Error);
    }
  })));
  for (const t of args.tasks) if (t.ds.kind === 'list') pinned.set(t.endpoint.url, pinned.get(lookupFor(t).url)!);
  return pinned;
}

/** Runs one task and turns any failure into a failed result naming the task. */
async function runOne(args: RunArgs, sink: DuckDBSink, checkpoints: CheckpointStore, task: Task, block: PinnedBlock | Error): Promise<TaskResult> {
  const startedAt = new Date();
  const label = { dataset: task.ds.name, chain: chainName(task.chainId), chainId: task.chainId };
  const empty = { pages: 0, rows: 0, requests: 0, retries: 0, bytes: 0, outOfRange: {}, truncated: {} };
  if (block instanceof Error) {
    const message = redact(`${task.ds.name} on ${label.chain}: the block lookup failed: ${block.message}`, args.config.apiKey);
    return { task, status: 'failed', stats: empty, block: null, cursorBefore: null, cursorAfter: null, startedAt, endedAt: new Date(), error: { cls: errorClass(block), message } };
  }
  args.log('task-start', { ...label, block: block.number });
  const deps = { config: args.config, client: args.client, sink, checkpoints, runId: args.runId, signal: args.signal, log: args.log, ...(args.progress ? { onPage: args.progress.page.bind(args.progress) } : {}) };
  let result: TaskResult;
  let run: Awaited<ReturnType<typeof runTask>>['run'] | undefined;
  let before: string | null = null;
  try {
    const r = await runTask(task, deps, block);
    run = r.run;
    before = r.before;
    result = { task, status: 'ok', stats: run.stats, block: block.number, cursorBefore: before, cursorAfter: run.cursor, startedAt, endedAt: new Date() };
    args.log('task-done', { ...label, rows: run.stats.rows, pages: run.stats.pages, requests: run.stats.requests, retries: run.stats.retries, outOfRange: run.stats.outOfRange });
  } catch (e) {
    const message = redact(`${task.ds.name} on ${label.chain}: ${explainWriteError(args.config.dataDir, e)}`, args.config.apiKey);
    const stats = e instanceof TaskError ? e.taskStats : empty;
    if (e instanceof TaskError) before = e.cursorBefore;
    result = { task, status: 'failed', stats, block: block.number, cursorBefore: before, cursorAfter: null, startedAt, endedAt: new Date(), error: { cls: errorClass(e), message } };
    args.log('task-failed', { ...label, errorClass: errorClass(e), error: message }, 'error');
  }
  return result;
}

/** The class of an error for the ledger: the upstream kind, or the error's name. */
export function errorClass(e: unknown): string {
  if (e instanceof TaskError) return errorClass(e.cause);
  if (e instanceof UpstreamError) return `upstream-${e.kind}`;
  if (e instanceof StopRequested) return 'stopped';
  if (isDiskFull(e)) return 'disk-full';
  return (e as Error)?.name ?? 'Error';
}

/** Runs every task of the plan; each task commits its own batches, so a failure never undoes another task's work. */
export async function runExport(args: RunArgs): Promise<TaskResult[]> {
  // 1. Tables for every dataset of the plan.
  await args.warehouse.ensureTables([...new Set(args.tasks.map((t) => t.ds))]);
  // 2. The run enters the ledger.
  const ledger = new RunLedger(args.warehouse);
  await ledger.start(args.runId, args.jobs);
  // 3. One block lookup per endpoint pins every page of its tasks.
  const pinned = await pinBlocks(args);
  // 4. Tasks run concurrently, at most `perEndpointConcurrency` per upstream host.
  const sink = new DuckDBSink(args.warehouse, args.config.dataDir);
  const checkpoints = new CheckpointStore(args.warehouse);
  const limit = pLimit(args.config.concurrency);
  const hosts = new Map<string, ReturnType<typeof pLimit>>();
  const hostLimit = (h: string) => hosts.get(h) ?? hosts.set(h, pLimit(args.config.perEndpointConcurrency)).get(h)!;
  args.progress?.start(args.tasks.length);
  const results = await Promise.all(args.tasks.map((t) => limit(() => hostLimit(t.endpoint.host)(async () => {
    const r = await runOne(args, sink, checkpoints, t, pinned.get(t.endpoint.url)!);
    args.progress?.done(r);
    return r;
  }))));
  args.progress?.stop();
  // 5. Each task and the run close in the ledger.
  await ledger.tasks(args.runId, results);
  await ledger.finish(args.runId, results, args.signal.aborted);
  return results;
}
