/**
 * The scheduled service, wired in one place (as graph-node keeps its start-up in `node/src/launcher.rs`, apart from
 * the command line): the scheduler that runs each job on its cron or every few seconds, the head check that keeps a
 * job run every few seconds idle while no head moved, the dashboard renewed after each run that ended well, the
 * metrics endpoint with its head watch, and the signals that stop it all. `pool-export schedule` only parses its
 * flags and calls `serveSchedule`.
 */

import { randomUUID } from 'node:crypto';
import { SCHEDULE_PUBLISH_EVERY_SECS } from '../bucket/cadence.ts';
import type { Job } from '../catalog/job.ts';
import { type Config, trackedSettings } from '../config/config.ts';
import { DataLockedError, UsageError } from '../errors.ts';
import type { Task } from '../export/task.ts';
import { HeadWatch } from '../metrics/head-watch.ts';
import type { ExportMetrics } from '../metrics/metrics.ts';
import { serveMetrics } from '../metrics/metrics-server.ts';
import { updateLakeFor } from '../pipeline/lake-step.ts';
import { type RunOutcome, runOnce } from '../pipeline/run.ts';
import { writeDashboard } from '../reports/dashboard.ts';
import { type JobTiming, Scheduler } from '../scheduler/scheduler.ts';
import { lockDataDir } from '../store/data-lock.ts';
import { readHeads } from '../store/freshness.ts';
import { Warehouse } from '../store/warehouse.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import type { EventLog } from '../util/logger.ts';

/** What the service runs, and how, as the command line resolved it. */
export interface ScheduleService {
  readonly config: Config;
  readonly jobs: readonly Job[];
  /** The tasks of a job (its plan, with the chains and datasets selected). */
  readonly plan: (jobs: readonly Job[]) => readonly Task[];
  /** The cron of each job whose schedule was overridden. */
  readonly overrides: Readonly<Record<string, string>>;
  /** Run each job every this many seconds instead of on its cron (unless overridden). */
  readonly everySecs: number | undefined;
  readonly runNow: boolean;
  readonly waitLockSecs: number;
  readonly verify: boolean;
  /** The dashboard renewed after each run that ended well, and its chains. */
  readonly dashboard?: { readonly file: string; readonly chains?: readonly number[] };
  /** The metrics endpoint: where it listens, and how often it reads the heads. */
  readonly metrics?: {
    readonly metrics: ExportMetrics;
    readonly host: string;
    readonly port: number;
    readonly headEveryMs: number;
  };
  readonly log: EventLog;
  /** The last lines of a run's summary, for the log. */
  readonly summarize: (outcome: RunOutcome) => string;
}

/**
 * As the schedule stops: a bucket lake that runs within the cadence left behind the local lake is published, under
 * the data folder's lock, so that the bucket holds every row the warehouse does when the process ends. A failure is
 * logged: the next run publishes it (`bucket/cadence.ts`). A second signal ends the process at once.
 */
async function publishOwed(config: Config, opts: { readonly waitLockSecs: number; readonly log: EventLog }) {
  if (!config.lake.bucket) return;
  const { readSyncState } = await import('../bucket/sync-state.ts');
  const { showLakeUrl } = await import('../config/lake-url.ts');
  const state = readSyncState(config.dataDir, { url: config.lake.bucket });
  if (!state.owed && !state.publishing) return;
  const started = performance.now();
  opts.log('lake-publish-on-stop', { to: showLakeUrl(config.lake.bucket) });
  try {
    const lock = await lockDataDir(config.dataDir, {
      what: 'publish as the schedule stops',
      waitSecs: opts.waitLockSecs,
      onLost: () => undefined,
    });
    try {
      const w = await Warehouse.open(
        config.dataDir,
        config.duckdbMemoryLimit ? { memoryLimit: config.duckdbMemoryLimit } : {},
      );
      try {
        await updateLakeFor(w, config, { runId: `publish-${randomUUID()}`, log: opts.log });
      } finally {
        await w.close();
      }
    } finally {
      await lock.release();
    }
    opts.log('lake-published-on-stop', { ms: Math.round(performance.now() - started) });
  } catch (e) {
    opts.log('lake-publish-failed', { error: (e as Error).message, next: 'the next run publishes it' }, 'error');
  }
}

/** Serves the schedule until SIGINT or SIGTERM, then stops after the run under way. */
export async function serveSchedule(s: ScheduleService): Promise<void> {
  const { config, log } = s;
  // A bucket lake: published at most this often; what the runs between wrote goes up with the next publish, or as
  // the schedule stops (`bucket/cadence.ts`).
  const publishEverySecs = config.lake.publishEverySecs ?? SCHEDULE_PUBLISH_EVERY_SECS;
  const metrics = s.metrics?.metrics;
  const timing = (job: Job): JobTiming => {
    const cron = s.overrides[job.name];
    if (cron !== undefined || s.everySecs === undefined) return { job, schedule: cron ?? job.schedule };
    return { job, everyMs: Math.round(s.everySecs * 1000) };
  };
  /** Renews the dashboard after a run that ended well; a failure to is logged, and the next run tries again. */
  const renewDashboard = async (outcome: RunOutcome) => {
    const d = s.dashboard;
    if (!d || outcome.stopped || outcome.lakeError || outcome.results.some((r) => r.status === 'failed')) return;
    try {
      const r = await writeDashboard(config.dataDir, d.file, {
        tracked: trackedSettings(config),
        ...(d.chains ? { filter: { chains: d.chains } } : {}),
      });
      log('dashboard-written', { file: r.file, bytes: r.bytes });
    } catch (e) {
      log('dashboard-failed', { file: d.file, error: (e as Error).message }, 'error');
    }
  };
  /** Per job run every few seconds: the heads of its routes at its last run that ended well (numbers by route). */
  const lastHeads = new Map<string, string>();
  const scheduler = new Scheduler(
    s.jobs.map(timing),
    async (job, signal) => {
      const tasks = s.plan([job]);
      // Run every few seconds, a job whose routes' heads have not moved since its last run that ended well has
      // nothing new: one head query per route, and no run (no ledger row, no lake write). The list has no block.
      let heads: string | undefined;
      if ('everyMs' in timing(job) && tasks.some((t) => t.ds.kind !== 'list')) {
        const keys = tasks.map((t) => ({ dataset: t.ds.name, chainId: t.chainId }));
        const read = await readHeads(config, keys, { signal });
        metrics?.setHeads(read.heads);
        if (read.heads.size > 0) {
          heads = JSON.stringify([...read.heads].map(([url, h]) => [url, h.number]).sort());
          if (lastHeads.get(job.name) === heads) {
            log('idle', { job: job.name, reason: "no route's head moved since the job's last run" }, 'debug');
            return;
          }
        }
      }
      const started = performance.now();
      const seconds = () => (performance.now() - started) / 1000;
      try {
        const outcome = await runOnce({
          config,
          tasks,
          jobs: [job.name],
          waitLockSecs: s.waitLockSecs,
          verify: s.verify,
          signal,
          log,
          ...(metrics ? { onClient: (c: UpstreamClient) => metrics.watch(c) } : {}),
          publishEverySecs,
        });
        metrics?.recordRun(job.name, { outcome }, seconds());
        const whole = !outcome.stopped && outcome.results.every((r) => r.status !== 'failed');
        if (heads !== undefined && whole) lastHeads.set(job.name, heads);
        log('job-summary', { job: job.name, summary: s.summarize(outcome) });
        await renewDashboard(outcome);
      } catch (e) {
        if (e instanceof DataLockedError) {
          metrics?.recordRun(job.name, { skipped: true }, seconds());
          log('skipped', { job: job.name, reason: e.message }, 'warn');
        } else {
          metrics?.recordRun(job.name, { error: e }, seconds());
          throw e;
        }
      }
    },
    log,
  );
  // The endpoint is up before the first run, so that probes and scrapes see the process at once.
  const m = s.metrics;
  const heads =
    m &&
    new HeadWatch({
      config,
      keys: s.plan(s.jobs).map((t) => ({ dataset: t.ds.name, chainId: t.chainId })),
      metrics: m.metrics,
      everyMs: m.headEveryMs,
    });
  const server = m
    ? await serveMetrics({
        host: m.host,
        port: m.port,
        metrics: m.metrics,
        readiness: () => heads!.readiness(),
      }).catch((e: NodeJS.ErrnoException) => {
        throw new UsageError(
          `--metrics-port ${m.port} on ${m.host}: ${e.code === 'EADDRINUSE' ? 'the port is in use; choose another' : e.code === 'EADDRNOTAVAIL' ? 'no such address here; choose another --metrics-host' : e.message}`,
        );
      })
    : undefined;
  heads?.start();
  if (server) {
    process.stdout.write(
      `metrics: ${server.url}/metrics (health ${server.url}/healthz, readiness ${server.url}/readyz)\n`,
    );
    log('metrics-serving', { url: server.url });
  }
  scheduler.start(s.runNow);
  const when = (j: Job) => {
    const t = timing(j);
    return 'everyMs' in t ? `every ${t.everyMs / 1000}s` : t.schedule;
  };
  process.stdout.write(`scheduler started: ${s.jobs.map((j) => `${j.name} (${when(j)})`).join(', ')}\n`);
  await new Promise<void>((resolve) => {
    const stop = (sig: string) => {
      log('stopping', { signal: sig });
      void scheduler
        .stop()
        .then(() => publishOwed(config, { waitLockSecs: s.waitLockSecs, log }))
        .then(() => heads?.stop())
        .then(() => server?.close())
        .then(resolve);
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  process.stdout.write('scheduler stopped\n');
}
