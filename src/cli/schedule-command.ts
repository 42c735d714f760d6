/**
 * `pool-export schedule`: runs each job on its cron schedule, or every few seconds with `--every`, until SIGINT or
 * SIGTERM.
 */

import type { Job } from '../catalog/job.ts';
import { trackedSettings } from '../config/config.ts';
import { DataLockedError, UsageError } from '../errors.ts';
import { buildPlan } from '../export/routing/plan.ts';
import { HeadWatch } from '../metrics/head-watch.ts';
import { serveMetrics } from '../metrics/metrics-server.ts';
import { type RunOutcome, runOnce } from '../pipeline/run.ts';
import { writeDashboard } from '../reports/dashboard.ts';
import { parseScheduleOverrides } from '../scheduler/cron.ts';
import { type JobTiming, Scheduler } from '../scheduler/scheduler.ts';
import { readHeads } from '../store/freshness.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import type { CommandBody } from './commands.ts';
import { checkDashboardOut } from './dashboard-command.ts';
import { metricsFor, parsePort, staleAfterOption } from './metrics-options.ts';
import { parseDuration } from './options.ts';
import { summary } from './summary.ts';
import { type CommonArgs, commonOptions, logFor, resolveRequest } from './write-options.ts';

interface Args extends CommonArgs {
  schedule?: string[];
  every?: string;
  'run-now': boolean;
  dashboard?: string;
  'metrics-port'?: number;
  'metrics-host': string;
  'metrics-head-every': string;
  'stale-after': string;
}

/** The yargs module of the `schedule` command. */
export const scheduleCommand = (all: readonly Job[]): CommandBody<Args> => ({
  builder: (y) =>
    staleAfterOption(
      commonOptions(y)
        .option('schedule', {
          type: 'string',
          array: true,
          describe: "override a job's schedule: --schedule events='*/2 * * * *' (repeatable)",
        })
        .option('every', {
          type: 'string',
          describe:
            "run every selected job this often (e.g. 10s, 1m) instead of on its cron, each only once a head of its routes moved (the liquidity list, which has no block, every time); --schedule still sets a job's own",
        })
        .option('run-now', { type: 'boolean', default: false, describe: 'also run every job once at start' })
        .option('dashboard', {
          type: 'string',
          describe: 'renew this HTML dashboard after each successful run (see `pool-export dashboard`)',
        })
        .option('metrics-port', {
          type: 'number',
          describe: 'serve /metrics (Prometheus), /healthz and /readyz on this port (0: any free port, printed)',
        })
        .option('metrics-host', {
          type: 'string',
          default: '127.0.0.1',
          describe: 'the address --metrics-port listens on (0.0.0.0 in a container, for probes and scrapes)',
        })
        .option('metrics-head-every', {
          type: 'string',
          default: '60s',
          describe:
            "with --metrics-port: how often the upstream's head is read (one request per route) for the lag and /readyz",
        }),
    ),
  handler: async (a) => {
    const { config, jobs, chains, datasets } = resolveRequest(a, all);
    if (!config.apiKey) throw new UsageError('no API key: set POOL_EXPORT_API_KEY (or "apiKey" in the config file)');
    const overrides = parseScheduleOverrides(a.schedule ?? []);
    for (const name of Object.keys(overrides))
      if (!jobs.some((j) => j.name === name))
        throw new UsageError(
          `--schedule names job "${name}", which is not among the selected jobs (${jobs.map((j) => j.name).join(', ')})`,
        );
    const dashboard = a.dashboard === undefined ? undefined : checkDashboardOut(a.dashboard, '--dashboard');
    const port = a['metrics-port'] === undefined ? undefined : parsePort(a['metrics-port'], '--metrics-port');
    const metrics = port === undefined ? undefined : metricsFor(config, a['stale-after'], { processMetrics: true });
    const headEveryMs = parseDuration(a['metrics-head-every'], '--metrics-head-every') * 1000;
    const log = logFor(a, config);
    /** Renews the dashboard after a run that ended well; a failure to is logged, and the next run tries again. */
    const renewDashboard = async (outcome: RunOutcome) => {
      if (!dashboard || outcome.stopped || outcome.lakeError || outcome.results.some((r) => r.status === 'failed'))
        return;
      try {
        const r = await writeDashboard(config.dataDir, dashboard, {
          tracked: trackedSettings(config),
          ...(chains ? { filter: { chains } } : {}),
        });
        log('dashboard-written', { file: r.file, bytes: r.bytes });
      } catch (e) {
        log('dashboard-failed', { file: dashboard, error: (e as Error).message }, 'error');
      }
    };
    const everySecs = a.every === undefined ? undefined : parseDuration(a.every, '--every');
    if (everySecs !== undefined && everySecs < 1)
      throw new UsageError(`--every must be at least 1s (a run every second at most), not "${a.every}"`);
    const timing = (job: Job): JobTiming => {
      const cron = overrides[job.name];
      if (cron !== undefined || everySecs === undefined) return { job, schedule: cron ?? job.schedule };
      return { job, everyMs: Math.round(everySecs * 1000) };
    };
    /** Per job run every few seconds: the heads of its routes at its last run that ended well (numbers by route). */
    const lastHeads = new Map<string, string>();
    const scheduler = new Scheduler(
      jobs.map(timing),
      async (job, signal) => {
        const tasks = buildPlan(config, {
          jobs: [job],
          ...(chains ? { chains } : {}),
          ...(datasets ? { datasets } : {}),
        });
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
            waitLockSecs: Math.max(30, a['wait-lock']),
            verify: a.verify,
            signal,
            log,
            ...(metrics ? { onClient: (c: UpstreamClient) => metrics.watch(c) } : {}),
          });
          metrics?.recordRun(job.name, { outcome }, seconds());
          const whole = !outcome.stopped && outcome.results.every((r) => r.status !== 'failed');
          if (heads !== undefined && whole) lastHeads.set(job.name, heads);
          log('job-summary', { job: job.name, summary: summary(outcome.results).split('\n').slice(-2).join(' ') });
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
    const heads =
      metrics &&
      new HeadWatch({
        config,
        keys: buildPlan(config, { jobs, ...(chains ? { chains } : {}), ...(datasets ? { datasets } : {}) }).map(
          (t) => ({ dataset: t.ds.name, chainId: t.chainId }),
        ),
        metrics,
        everyMs: headEveryMs,
      });
    const server =
      metrics && port !== undefined
        ? await serveMetrics({ host: a['metrics-host'], port, metrics, readiness: () => heads!.readiness() }).catch(
            (e: NodeJS.ErrnoException) => {
              throw new UsageError(
                `--metrics-port ${port} on ${a['metrics-host']}: ${e.code === 'EADDRINUSE' ? 'the port is in use; choose another' : e.code === 'EADDRNOTAVAIL' ? 'no such address here; choose another --metrics-host' : e.message}`,
              );
            },
          )
        : undefined;
    heads?.start();
    if (server) {
      process.stdout.write(
        `metrics: ${server.url}/metrics (health ${server.url}/healthz, readiness ${server.url}/readyz)\n`,
      );
      log('metrics-serving', { url: server.url });
    }
    scheduler.start(a['run-now']);
    const when = (j: Job) => {
      const t = timing(j);
      return 'everyMs' in t ? `every ${t.everyMs / 1000}s` : t.schedule;
    };
    process.stdout.write(`scheduler started: ${jobs.map((j) => `${j.name} (${when(j)})`).join(', ')}\n`);
    await new Promise<void>((resolve) => {
      const stop = (sig: string) => {
        log('stopping', { signal: sig });
        void scheduler
          .stop()
          .then(() => heads?.stop())
          .then(() => server?.close())
          .then(resolve);
      };
      process.once('SIGINT', () => stop('SIGINT'));
      process.once('SIGTERM', () => stop('SIGTERM'));
    });
    process.stdout.write('scheduler stopped\n');
  },
});
