/** One run as the CLI and the scheduler make it: lock the data folder, open the warehouse, export, close, unlock. */
import { randomUUID } from 'node:crypto';
import { trackedSettings } from '../config/config.ts';
import { diskFullMessage, explainWriteError, isDiskFull } from '../errors.ts';
import { runExport } from '../export/extract.ts';
import type { RunArgs } from '../export/run-args.ts';
import { isStopped, type TaskResult } from '../export/task.ts';
import { writeViewsFile } from '../reports/views.ts';
import { lockDataDir } from '../store/data-lock.ts';
import { freeBytes, spillSpaceProblem } from '../store/spill-space.ts';
import { mark } from '../store/statement-log.ts';
import { refreshVerifications } from '../store/status-file.ts';
import { Warehouse } from '../store/warehouse.ts';
import { UpstreamClient } from '../upstream/client.ts';
import { type RunVerification, verifyRun } from '../verify/after-run.ts';
import { checkpointBesideLake, openBucket, prepareBucket, writeLakeStep } from './lake-step.ts';

/** Inputs of one run: those of `runExport` that do not need the warehouse open, and the lock's patience. */
export interface RunOnceArgs extends Pick<RunArgs, 'config' | 'tasks' | 'jobs' | 'signal' | 'log' | 'progress'> {
  /** Seconds to wait for the data folder's lock before giving up. */
  readonly waitLockSecs: number;
  /** Whether the run verifies what it touched against the upstream's counters (by default it does). */
  readonly verify?: boolean;
  /** Told of the run's upstream client once it exists, so that its 429s and pace can be watched during the run. */
  readonly onClient?: (client: UpstreamClient) => void;
  /** A bucket lake is published at most once per this many seconds (0 or absent: by this run; `bucket/cadence.ts`). */
  readonly publishEverySecs?: number;
}

/** One upstream host (or host and route key) of a run: the 429s it answered and the pace the run kept to. */
export interface UpstreamPace {
  readonly host: string;
  /** HTTP 429 answers during the run. */
  readonly limited: number;
  /** Requests per second the run kept to after its first 429; null when it met none. */
  readonly requestsPerSecond: number | null;
}

/** The outcome of a run. */
export interface RunOutcome {
  readonly runId: string;
  readonly results: TaskResult[];
  readonly stopped: boolean;
  /** Why the lake write failed, when it did. */
  readonly lakeError?: string;
  /** What the run's verification found, when it verified. */
  readonly verification?: RunVerification;
  /** The lake step: written (locally, and published to the bucket lake when there is one), failed, or deferred. */
  readonly lake: 'written' | 'failed' | 'deferred';
  /** A bucket lake written within its cadence: the local lake is up to date, the bucket waits for a later publish. */
  readonly publishDeferred?: boolean;
  /** Each upstream host the run asked. */
  readonly upstream: readonly UpstreamPace[];
}

/** Runs the plan once under the data folder's lock. */
export async function runOnce(args: RunOnceArgs): Promise<RunOutcome> {
  try {
    return await lockedRun(args);
  } catch (e) {
    if (isDiskFull(e)) throw new Error(diskFullMessage(args.config.dataDir, e), { cause: e });
    throw e;
  }
}

async function lockedRun(args: RunOnceArgs): Promise<RunOutcome> {
  const lost = new AbortController();
  const signal = AbortSignal.any([args.signal, lost.signal]);
  mark('lock');
  const lock = await lockDataDir(args.config.dataDir, {
    what: `run of ${args.jobs.join(',') || 'datasets'}`,
    waitSecs: args.waitLockSecs,
    onWait: (owner) => args.log('lock-wait', { owner, waitSecs: args.waitLockSecs }),
    onLost: (e) => {
      args.log('lock-lost', { error: e.message }, 'error');
      lost.abort();
    },
  });
  try {
    const { dataDir, duckdbMemoryLimit: memoryLimit } = args.config;
    const short = spillSpaceProblem({ dataDir, memoryLimit }, freeBytes(dataDir));
    if (short) throw new Error(short);
    // A bucket lake is checked before anything is fetched; a data folder without a warehouse resumes from it.
    const bucket = await openBucket(args.config, signal);
    try {
      if (bucket) await prepareBucket(bucket, dataDir, args.log);
      mark('open');
      return await openAndRun(args, { signal, bucket });
    } finally {
      bucket?.close();
    }
  } finally {
    mark('release');
    await lock.release();
    mark('released');
  }
}

async function openAndRun(
  args: RunOnceArgs,
  ctx: { readonly signal: AbortSignal; readonly bucket: Awaited<ReturnType<typeof openBucket>> },
): Promise<RunOutcome> {
  const { signal, bucket } = ctx;
  const { dataDir, duckdbMemoryLimit: memoryLimit } = args.config;
  const warehouse = await Warehouse.open(dataDir, memoryLimit ? { memoryLimit } : {});
  let checkpointing: Promise<void> | undefined;
  try {
    const client = UpstreamClient.forConfig(args.config, { signal });
    args.onClient?.(client);
    const runId = randomUUID();
    const runStartedMs = Date.now();
    args.log('run-start', {
      runId,
      jobs: args.jobs,
      tasks: args.tasks.length,
      memoryLimit: memoryLimit || 'none',
      memoryLimitFrom: args.config.duckdbMemoryLimitFrom,
    });
    mark('tasks');
    // What the run's probes found of its routes, which its verification reads rather than probing them again.
    const { results, probed } = await runExport({
      config: args.config,
      tasks: args.tasks,
      jobs: args.jobs,
      warehouse,
      client,
      runId,
      signal,
      log: args.log,
      ...(args.progress ? { progress: args.progress } : {}),
    });
    // The tasks' commits are checkpointed beside the lake write and the verification.
    checkpointing = checkpointBesideLake(warehouse, args.config, signal);
    // What the run touched, against the upstream's counters; a failure of the verification is no failure of the run.
    // It runs beside the lake write (its requests wait on the upstream while the lake's statements use the cores), and
    // ends before a bucket lake is published, so that the published state holds this run's verifications too.
    // A run whose tasks all failed touched nothing to verify, and says so rather than "no gaps".
    const anyOk = results.some((r) => r.status === 'ok');
    const verifying: Promise<RunVerification | undefined> =
      args.verify !== false && !signal.aborted && anyOk
        ? (async () => {
            mark('verify');
            // On a connection of its own: its statements go beside the lake write's on the warehouse's connection, and
            // its record waits for the checkpoint beside them (a commit waits for a checkpoint) without holding them up.
            try {
              const lane = await warehouse.lane();
              const v = await verifyRun({
                config: args.config,
                warehouse: lane,
                client,
                runId,
                results,
                log: args.log,
                probed,
              }).finally(() => lane.close());
              // The status file shows the verification (derived data: a failure to write it is no failure); a run
              // that verified nothing leaves it as its tasks wrote it.
              if (v.chains > 0) await refreshVerifications(warehouse, args.config.dataDir).catch(() => undefined);
              return v;
            } catch (e) {
              if (!signal.aborted) args.log('verify-failed', { runId, error: (e as Error).message }, 'warn');
              return undefined;
            }
          })()
        : Promise.resolve(undefined);
    // The new data goes to the Parquet lake (this run's, and any an interrupted run left), and the views file is renewed.
    // A failure here keeps the warehouse as committed: what the lake lacks stays listed for the next run. So does a
    // stop: a run stopped during its tasks leaves the lake to the next run, and one stopped during the lake write
    // interrupts it (see `writeLake`), so that a stop never waits for a lake write.
    let lakeError: string | undefined;
    let lakeStopped = false;
    let publishDeferred = false;
    const lakeDeferred = signal.aborted;
    if (lakeDeferred) args.log('lake-deferred', { runId, reason: 'stopped before the lake write' }, 'warn');
    else
      try {
        const started = performance.now();
        mark('lake');
        const step = await writeLakeStep(warehouse, args.config, {
          bucket,
          runId,
          signal,
          log: args.log,
          ...(args.publishEverySecs ? { publishEverySecs: args.publishEverySecs } : {}),
          runStartedMs,
          // No lake file holds a row of this run before its own lake write.
          freshRun: true,
          beforePublish: async () => void (await verifying),
        });
        const { files } = step;
        publishDeferred = step.publishDeferred === true;
        lakeStopped = signal.aborted;
        mark('views');
        if (!signal.aborted) await writeViewsFile(args.config.dataDir, trackedSettings(args.config));
        // `ms`: the lake write and the views file, the part of a run after its tasks.
        args.log('lake-written', {
          runId,
          files,
          ms: Math.round(performance.now() - started),
          ...(signal.aborted ? { stopped: true } : {}),
        });
      } catch (e) {
        // A stop interrupts the lake write: what it had not published stays listed for the next run.
        lakeStopped = signal.aborted;
        if (signal.aborted) args.log('lake-deferred', { runId, reason: 'stopped during the lake write' }, 'warn');
        else
          lakeError = `the Parquet lake was not brought up to date (the warehouse keeps every committed row; the next run writes what the lake lacks): ${explainWriteError(args.config, e)}`;
        if (lakeError) args.log('lake-failed', { runId, error: lakeError }, 'error');
      }
    const verification = await verifying;
    const upstream = [...client.governors].map(
      ([host, g]): UpstreamPace => ({ host, limited: g.limited, requestsPerSecond: g.limited ? g.rate : null }),
    );
    for (const u of upstream)
      if (u.limited)
        args.log('upstream-pace', {
          host: u.host,
          rateLimited: u.limited,
          requestsPerSecond: Number(u.requestsPerSecond!.toFixed(2)),
        });
    mark('run-done');
    args.log('run-done', {
      runId,
      // A task stopped on request did not fail: counted apart.
      failed: results.filter((r) => r.status === 'failed' && !isStopped(r)).length,
      ...(signal.aborted ? { stoppedTasks: results.filter(isStopped).length } : {}),
      rows: results.reduce((a, r) => a + r.stats.rows, 0),
      stopped: signal.aborted,
    });
    return {
      runId,
      results,
      stopped: signal.aborted,
      ...(lakeError ? { lakeError } : {}),
      ...(verification ? { verification } : {}),
      lake: lakeError ? 'failed' : lakeDeferred || lakeStopped ? 'deferred' : 'written',
      ...(publishDeferred ? { publishDeferred } : {}),
      upstream,
    };
  } finally {
    // A stopped run leaves the checkpoint of the write-ahead log to the next open, so that it ends sooner.
    mark('close');
    // The checkpoint beside the lake write ends before the close, whose own checkpoint writes what came after it.
    await checkpointing;
    await warehouse.close({ checkpoint: !signal.aborted });
    mark('closed');
  }
}
